import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, TSX_LOADER } from "../support/cli.js";

// Every command pays for what the command line imports before it parses its arguments. The heavy
// parts (the language server, the database driver, the planner's diff, the dev loop) load in the
// actions that use them; this records, through a module hook, what a light command really loads.
const work = mkdtempSync(join(tmpdir(), "charter-startup-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const hook = join(work, "hook.mjs");
writeFileSync(
  hook,
  `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  if (!url.startsWith("node:")) appendFileSync(process.env.CHARTER_LOADED, url + "\\n");
  return next(url, context);
}
`,
);
const register = join(work, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);

/** The module URLs `charter ARGS` loads, in load order. */
function loadedBy(args: readonly string[], exits: readonly number[] = [0]): string[] {
  const log = join(work, `loaded-${args.join("-").replace(/\W+/g, "_")}.txt`);
  writeFileSync(log, "");
  const r = spawnSync(
    process.execPath,
    ["--import", TSX_LOADER, "--import", pathToFileURL(register).href, resolve(REPO_ROOT, "src/cli/charter.ts"), ...args],
    { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: "1", CHARTER_LOADED: log }, encoding: "utf8", timeout: 120_000 },
  );
  expect(exits, r.stderr).toContain(r.status);
  return readFileSync(log, "utf8").split("\n").filter(Boolean);
}

const HEAVY = [
  /\/node_modules\/pg\//,
  /\/node_modules\/vscode-languageserver/,
  /\/node_modules\/diff\//,
  /\/node_modules\/better-sqlite3\//,
  /\/node_modules\/(ai|@ai-sdk\/[^/]+)\//,
  /\/src\/(lsp|dev|plan)\//,
  /\/src\/healer\/(pipeline|store|proposal)\//,
];

describe("what a light command loads", () => {
  it.each([[["--version"]], [["forge", "validate", "examples/helpdesk"]]])("charter %j loads none of the heavy parts", (args) => {
    const loaded = loadedBy(args);
    // The hook saw the program itself, so an empty list is not mistaken for a pass.
    expect(loaded.some((u) => u.endsWith("/src/cli/program.ts"))).toBe(true);
    expect(loaded.filter((u) => HEAVY.some((h) => h.test(u)))).toEqual([]);
  });

  it("the hook sees a heavy part when a command does load it", () => {
    expect(loadedBy(["plan", "--help"]).some((u) => u.endsWith("/src/cli/commands/plan.ts"))).toBe(true);
    const planned = loadedBy(["plan", "examples/helpdesk", "--output", join(work, "out"), "--format", "json"], [0, 2]);
    expect(planned.some((u) => /\/src\/plan\//.test(u))).toBe(true);
  });
});
