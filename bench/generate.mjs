#!/usr/bin/env node
import { execFileSync, spawnSync } from "node:child_process";
// Time of `charter forge generate PATH --target all` for a synthetic domain of 2,000 entities, in a
// fresh process (what a user waits for), into an empty folder and again over its own output; then
// checks that the second run wrote nothing and that a run into a new folder gives the same bytes.
// Target: < 3 s. Run after `npm run build`.
//
// Beside it, in the same run, the floor the disk sets: the same files written by a plain loop of
// mkdirSync and writeFileSync into a new folder. On ext4 without a journal (this machine's), the
// kernel skips inodes freed in the last minutes when it creates a file, so creating thousands of
// files right after thousands were deleted (by an earlier benchmark, say) costs up to ten times
// what it costs on a quiet disk; that floor says how much of the figure was the disk's.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeSyntheticDomain } from "./synthetic-domain.mjs";

const root = resolve(import.meta.dirname, "..");
const cli = join(root, "dist/cli/charter.js");
if (!existsSync(cli)) execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const N = Number(process.env.BENCH_ENTITIES ?? 2000);

/** Wall time, and CPU time (user + system) via /usr/bin/time: on a shared machine the second is the steadier figure. */
function run(args) {
  const t0 = process.hrtime.bigint();
  const timed = existsSync("/usr/bin/time");
  const command = timed ? ["/usr/bin/time", ["-f", "cpu %U %S", process.execPath, cli, ...args]] : [process.execPath, [cli, ...args]];
  const r = spawnSync(command[0], command[1], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`charter ${args.join(" ")} failed:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(0, 2000)}`);
  const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { ms, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : Number.NaN, stdout: r.stdout };
}

/** One hash over every file's path and bytes, and the file count. */
function treeHash(dir) {
  const hash = createHash("sha256");
  let files = 0;
  const walk = (abs, rel) => {
    for (const name of readdirSync(abs).sort()) {
      const a = join(abs, name);
      if (statSync(a).isDirectory()) walk(a, `${rel}${name}/`);
      else {
        hash.update(`${rel}${name}\0`).update(readFileSync(a)).update("\0");
        files++;
      }
    }
  };
  walk(dir, "");
  return { hash: hash.digest("hex"), files };
}

/** Every file under `dir`: its path below it and its bytes. */
function filesOf(dir) {
  const out = [];
  const walk = (abs, rel) => {
    for (const name of readdirSync(abs).sort()) {
      const a = join(abs, name);
      if (statSync(a).isDirectory()) walk(a, `${rel}${name}/`);
      else out.push([`${rel}${name}`, readFileSync(a)]);
    }
  };
  walk(dir, "");
  return out;
}

/** Milliseconds to write `files` into the new folder `dir` with the plainest loop Node has. */
function plainWrite(files, dir) {
  const t0 = process.hrtime.bigint();
  const made = new Set();
  for (const [rel, bytes] of files) {
    const abs = join(dir, rel);
    const parent = abs.slice(0, abs.lastIndexOf("/"));
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    writeFileSync(abs, bytes);
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const work = mkdtempSync(join(tmpdir(), "charter-bench-generate-"));
try {
  const domain = join(work, "domain");
  writeSyntheticDomain(domain, N);
  const outA = join(work, "a");
  const outB = join(work, "b");
  const first = run(["forge", "generate", domain, "--target", "all", "--output", outA]);
  const again = run(["forge", "generate", domain, "--target", "all", "--output", outA]);
  const floorBefore = plainWrite(filesOf(outA), join(work, "plain-1"));
  const fresh = run(["forge", "generate", domain, "--target", "all", "--output", outB]);
  const floorAfter = plainWrite(filesOf(outA), join(work, "plain-2"));
  const dry = run(["forge", "generate", domain, "--target", "all", "--output", join(work, "dry"), "--dry-run"]);
  const a = treeHash(outA);
  const b = treeHash(outB);
  const summary = (out) =>
    out.stdout
      .split("\n")
      .filter((l) => /^[a-z-]+: \d+ files/.test(l))
      .join("; ");
  console.log(`generate --target all, ${N} entities, fresh process each run`);
  console.log(
    `  into an empty folder:        ${first.ms.toFixed(0)} ms wall, ${first.cpuMs.toFixed(0)} ms CPU  (${a.files} files; ${summary(first)})`,
  );
  console.log(`  again over its own output:   ${again.ms.toFixed(0)} ms wall, ${again.cpuMs.toFixed(0)} ms CPU  (${summary(again)})`);
  console.log(`  into another empty folder:   ${fresh.ms.toFixed(0)} ms wall, ${fresh.cpuMs.toFixed(0)} ms CPU`);
  console.log(`  the same, writing nothing:   ${dry.ms.toFixed(0)} ms wall, ${dry.cpuMs.toFixed(0)} ms CPU  (--dry-run)`);
  console.log(
    `  the disk's floor: the same files written by a plain loop into a new folder: ${floorBefore.toFixed(0)} ms before the last run, ${floorAfter.toFixed(0)} ms after it`,
  );
  const rewrote = /\bwrote /.test(again.stdout);
  console.log(
    `byte-identical on re-run: ${a.hash === b.hash && !rewrote ? "yes" : "NO"} (tree sha256 ${a.hash.slice(0, 16)} vs ${b.hash.slice(0, 16)}; second run wrote ${rewrote ? "files" : "nothing"})`,
  );
  const worst = Math.max(first.ms, fresh.ms);
  const worstCpu = Math.max(first.cpuMs, fresh.cpuMs);
  console.log(
    `target: generate all targets for ${N} entities < 3000 ms: ${worst.toFixed(0)} ms wall -> ${worst < 3000 ? "MET" : "MISSED"} (CPU ${worstCpu.toFixed(0)} ms -> ${worstCpu < 3000 ? "met" : "missed"})`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
