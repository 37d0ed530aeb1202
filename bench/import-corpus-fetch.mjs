#!/usr/bin/env node
// Materialises the external import corpus (.cache/import-corpus/<name>/) from the manifests in
// bench/import-corpus-external/ and local bare mirrors of their repositories, so that
// `npm run bench -- import-corpus` can run them. The inputs are never committed (see the README there).
//
//   node bench/import-corpus-fetch.mjs [--mirrors DIR] [--force] [NAME...]
//
// A mirror of github.com/<owner>/<name> is looked up as DIR/<owner>+<name>/repo (the layout the
// workplace's `fetch` tool leaves under /work/.mirror) or DIR/<owner>+<name>.git. Each manifest says:
//   paths  the files/folders to take at `commit`;
//   into   the folder under .cache/import-corpus/<name>/ they go to ("" = the input's folder itself);
//   strip  whether the paths' common parent folder is dropped (true) or the paths kept (false).
// When the manifest's commit is absent from the mirror, the mirror's HEAD is used and the manifest
// is updated (the change is printed, to be committed). The licence file goes to <name>/LICENSE.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const manifestDir = join(root, "bench/import-corpus-external");
const cache = join(root, ".cache/import-corpus");
const args = process.argv.slice(2);
const mirrorsAt = args.indexOf("--mirrors");
const mirrors = mirrorsAt >= 0 ? args[mirrorsAt + 1] : (process.env.CHARTER_MIRRORS ?? "/work/.mirror");
const force = args.includes("--force");
const only = args.filter((a, i) => !a.startsWith("--") && i !== mirrorsAt + 1);

function git(dir, ...a) {
  return execFileSync("git", ["--git-dir", dir, ...a], { encoding: "utf8", maxBuffer: 1 << 28 }).trim();
}

function mirrorOf(repository) {
  const slug = repository.replace(/^https:\/\/github\.com\//, "").replace(/\.git$/, "");
  const key = slug.replace("/", "+");
  for (const dir of [join(mirrors, key, "repo"), join(mirrors, `${key}.git`), join(mirrors, key)])
    if (existsSync(join(dir, "HEAD"))) return dir;
  return null;
}

/** The common parent folder of the paths: a lone folder is its own parent, a lone file its dirname. */
function commonFolder(paths) {
  const parts = paths.map((p) => {
    const segs = p.replace(/\/+$/, "").split("/");
    return p.endsWith("/") ? segs : segs.slice(0, -1);
  });
  const first = parts[0] ?? [];
  let n = 0;
  while (n < first.length && parts.every((s) => s[n] === first[n])) n++;
  return n;
}

function licenceFile(dir, commit, license) {
  const named = /\(([^)\s]+)/.exec(license)?.[1] ?? (/^[\w.-]+\.(md|txt)$|^LICEN[CS]E/.test(license) ? license : null);
  const candidates = [named, "LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING"].filter(Boolean);
  for (const c of candidates) {
    const r = spawnSync("git", ["--git-dir", dir, "show", `${commit}:${c}`], { encoding: "utf8", maxBuffer: 1 << 24 });
    if (r.status === 0) return r.stdout;
  }
  return null;
}

const manifests = readdirSync(manifestDir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => ({ file: join(manifestDir, f), m: JSON.parse(readFileSync(join(manifestDir, f), "utf8")) }))
  .filter(({ m }) => only.length === 0 || only.includes(m.name));
let failed = 0;
for (const { file, m } of manifests) {
  const target = join(cache, m.name);
  const entry = join(target, String(m.command).split(":")[1] ?? "");
  if (existsSync(entry) && !force) {
    console.log(`${m.name}: present`);
    continue;
  }
  const dir = mirrorOf(m.repository);
  if (!dir) {
    console.error(`${m.name}: no mirror of ${m.repository} under ${mirrors} (bring it first)`);
    failed++;
    continue;
  }
  let commit = m.commit;
  if (spawnSync("git", ["--git-dir", dir, "cat-file", "-e", `${commit}^{commit}`]).status !== 0) {
    commit = git(dir, "rev-parse", "HEAD");
    const text = readFileSync(file, "utf8").replace(`"commit": "${m.commit}"`, `"commit": "${commit}"`);
    writeFileSync(file, text);
    console.log(`${m.name}: commit ${m.commit} not in the mirror; took ${commit} and updated ${file}`);
  }
  rmSync(target, { recursive: true, force: true });
  const dest = join(target, m.into ?? "");
  mkdirSync(dest, { recursive: true });
  const paths = m.paths.map((p) => p.replace(/\/+$/, ""));
  const strip = m.strip ? commonFolder(m.paths) : 0;
  // git archive | tar: one process pair per input, even for a ~2,000-file specification folder.
  const archive = spawnSync("git", ["--git-dir", dir, "archive", "--format=tar", commit, "--", ...paths], {
    maxBuffer: 1 << 30,
  });
  if (archive.status !== 0) {
    console.error(`${m.name}: git archive failed: ${archive.stderr.toString().trim()}`);
    failed++;
    continue;
  }
  const untar = spawnSync("tar", ["-x", "-C", dest, `--strip-components=${strip}`], { input: archive.stdout });
  if (untar.status !== 0) {
    console.error(`${m.name}: tar failed: ${untar.stderr.toString().trim()}`);
    failed++;
    continue;
  }
  const licence = licenceFile(dir, commit, String(m.license ?? ""));
  if (licence !== null) writeFileSync(join(target, "LICENSE"), licence);
  const ok = existsSync(entry);
  if (!ok) failed++;
  console.log(`${m.name}: ${ok ? "ok" : `MISSING ${entry}`} (${commit.slice(0, 10)}${licence === null ? ", no licence file found" : ""})`);
}
process.exit(failed > 0 ? 1 : 0);
