#!/usr/bin/env node
// Runs every benchmark in turn and prints their figures: `npm run bench`, or `npm run bench -- NAME...`
// for some of them (generate, validate, format, healer, agents, backend, frontend, lighthouse, import, import-corpus,
// dev, lsp, random-domains). Arguments after the first one that is not a benchmark's name go to that
// benchmark (`npm run bench -- import-corpus moby-swagger2 sakila-mysql` runs two corpus inputs).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(import.meta.dirname, "..");
const tsx = pathToFileURL(resolve(root, "node_modules/tsx/dist/loader.mjs")).href;
// generate runs before validate: validate removes 35,000 files at its end, and on a file system that
// skips recently freed inodes (ext4 without a journal) creating files just after costs up to ten
// times more (bench/generate.mjs prints that floor); validate only reads, so the order costs it nothing.
const benches = {
  generate: ["bench/generate.mjs"],
  validate: ["bench/validate.mjs"],
  format: ["bench/format.mjs"],
  "random-domains": ["bench/random-domains.mjs"],
  healer: ["--import", tsx, "bench/healer.ts"],
  agents: ["--import", tsx, "bench/agents.ts"],
  backend: ["bench/backend.mjs"],
  frontend: ["bench/frontend.mjs"],
  lighthouse: ["--import", tsx, "bench/lighthouse.ts"],
  import: ["bench/import.mjs"],
  "import-corpus": ["--import", tsx, "bench/import-corpus.ts"],
  dev: ["bench/dev.mjs"],
  lsp: ["bench/lsp.mjs"],
};
const argv = process.argv.slice(2);
const firstArg = argv.findIndex((a) => !(a in benches));
const names = firstArg < 0 ? argv : argv.slice(0, firstArg);
// Filters (input names, --format=...) for the last named benchmark; an unknown first word with no
// benchmark before it is still an error below.
const passThrough = firstArg > 0 ? argv.slice(firstArg) : [];
if (firstArg === 0) names.push(argv[0]);
const wanted = names.length > 0 ? names : Object.keys(benches);
let failed = 0;
for (const name of wanted) {
  const args = benches[name];
  if (!args) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`);
    process.exit(2);
  }
  console.log(`\n== ${name}`);
  const extra = name === wanted[wanted.length - 1] ? passThrough : [];
  const r = spawnSync(process.execPath, [...args, ...extra], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
