import { readFileSync, writeFileSync } from "node:fs";

/**
 * Writes a generated module, or with `--check` on the command line exits 1 when the committed one
 * differs from what would be written (`npm run build` and the tests run the check).
 */
export function writeOrCheck(out, source, command) {
  if (!process.argv.includes("--check")) {
    writeFileSync(out, source);
    return;
  }
  let current = "";
  try {
    current = readFileSync(out, "utf8");
  } catch {}
  if (current !== source) {
    console.error(`${out} is out of date with schemas/: run ${command}`);
    process.exit(1);
  }
}
