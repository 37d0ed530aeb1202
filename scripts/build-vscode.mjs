#!/usr/bin/env node
// Builds the VS Code extension of editors/vscode: bundles its client with esbuild (vscode itself
// stays external, the editor provides it) and packages it with vsce as dist/charter-contracts.vsix.
// Bundled, the package needs no node_modules of its own, so packaging works offline.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const ext = join(root, "editors/vscode");
rmSync(join(ext, "dist"), { recursive: true, force: true });
await build({
  entryPoints: [join(ext, "extension.js")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  outfile: join(ext, "dist/extension.js"),
  logLevel: "warning",
});
mkdirSync(join(root, "dist"), { recursive: true });
// vsce lists every packaged file on stdout; the build prints it only when packaging fails.
try {
  execFileSync(
    process.execPath,
    [join(root, "node_modules/@vscode/vsce/vsce"), "package", "--no-dependencies", "-o", join(root, "dist/charter-contracts.vsix")],
    { cwd: ext, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" },
  );
} catch (e) {
  process.stderr.write(`${e.stdout ?? ""}${e.stderr ?? ""}`);
  throw e;
}
