// The corpus of real public inputs (test/fixtures/import-corpus) through import -> validate ->
// generate -> the app on PostgreSQL -> its generated test suite: a table and the success rate.
// `npm run bench -- import-corpus [NAME...]`; run after `npm run build` (done here when dist/ is missing).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { corpusInputs, runCorpusInput } from "../test/support/import-corpus.js";

if (!existsSync("dist/cli/charter.js")) execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
const only = process.argv.slice(2);
const inputs = corpusInputs().filter((i) => only.length === 0 || only.includes(i.name));
const rows: string[][] = [["input", "format", "result", "entities", "routes", "notes", "import s", "total s", "suite p/f/s"]];
const failures: string[] = [];
let ok = 0;
for (const input of inputs) {
  const r = await runCorpusInput(input);
  if (r.ok) ok++;
  else failures.push(`${r.name} (${r.failedAt}): ${r.detail}`);
  rows.push([
    r.name,
    r.format,
    r.ok ? "ok" : `FAIL ${r.failedAt}`,
    String(r.entities),
    String(r.routes),
    String(r.notes),
    (r.importMs / 1000).toFixed(1),
    (r.totalMs / 1000).toFixed(1),
    r.suite ? `${r.suite.passed}/${r.suite.failed}/${r.suite.skipped}` : "-",
  ]);
  process.stderr.write(`${r.name}: ${r.ok ? "ok" : `FAIL at ${r.failedAt}`}\n`);
}
const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "));
console.log(`\nsuccess: ${ok}/${inputs.length} (${inputs.length > 0 ? Math.round((100 * ok) / inputs.length) : 0}%)`);
if (failures.length > 0) console.log(`\nfailures:\n${failures.map((f) => `- ${f.replace(/\n/g, "\n    ")}`).join("\n")}`);
