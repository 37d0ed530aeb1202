import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const VSIX = resolve("dist/charter-contracts.vsix");

// `npm run build` packages the extension; this checks what a user installs, not how it was made.
describe.runIf(existsSync(VSIX))("the VS Code extension package", () => {
  it("holds the bundled client, which starts `charter lsp --stdio` for contract files", () => {
    const list = execFileSync("unzip", ["-Z1", VSIX], { encoding: "utf8" }).split("\n");
    expect(list).toEqual(expect.arrayContaining(["extension/package.json", "extension/dist/extension.js", "extension.vsixmanifest"]));
    expect(list.some((f) => f.includes("node_modules"))).toBe(false);
    const manifest = JSON.parse(execFileSync("unzip", ["-p", VSIX, "extension/package.json"], { encoding: "utf8" }));
    expect(manifest.main).toBe("./dist/extension.js");
    expect(manifest.contributes.configuration.properties["charter.server.args"].default).toEqual(["lsp", "--stdio"]);
    const bundle = execFileSync("unzip", ["-p", VSIX, "extension/dist/extension.js"], { encoding: "utf8", maxBuffer: 1 << 26 });
    // The language client is inside the bundle; only `vscode` is left to the editor.
    expect(bundle).toContain("LanguageClient");
    expect(bundle).toMatch(/require\("vscode"\)/);
    expect(bundle).not.toMatch(/require\("vscode-languageclient/);
  });
});
