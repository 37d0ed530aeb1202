// The corpus of real public inputs through import -> validate -> generate -> the app on PostgreSQL
// -> its generated test suite (working app), and each import's fidelity: its own report
// (carried / changed / left out / silent) and the independent judge of its format (facts compared,
// silent differences). Inputs: the committed corpus (test/fixtures/import-corpus) and the external
// ones listed in bench/import-corpus-external/<name>.json, whose files live (never committed) in
// .cache/import-corpus/<name>/; absent ones are named.
// `npm run bench -- import-corpus [NAME...]`; run after `npm run build` (done here when dist/ is missing).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type CorpusInput, corpusInputs, externalInputs, runCorpusInput } from "../test/support/import-corpus.js";

if (!existsSync("dist/cli/charter.js")) execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const formatOnly = process.argv.find((a) => a.startsWith("--format="))?.slice("--format=".length);
const external = externalInputs();
const absent = external.filter((i) => !i.present);
const inputs: CorpusInput[] = [...corpusInputs(), ...external.filter((i) => i.present)].filter(
  (i) => (only.length === 0 || only.includes(i.name)) && (formatOnly === undefined || i.format === formatOnly),
);
const rows: string[][] = [
  [
    "input",
    "format",
    "src",
    "result",
    "entities",
    "routes",
    "notes",
    "import s",
    "suite p/f/s",
    "carried",
    "changed",
    "left out",
    "silent",
    "judged",
    "judge silent",
  ],
];
const failures: string[] = [];
const silentLines: string[] = [];
const total = { ok: 0, carried: 0, changed: 0, leftOut: 0, silent: 0, compared: 0, judgeSilent: 0, judged: 0 };
for (const input of inputs) {
  const r = await runCorpusInput(input);
  if (r.ok) total.ok++;
  else failures.push(`${r.name} (${r.failedAt}): ${r.detail}`);
  const f = r.fidelity;
  if (f) {
    total.carried += f.carried;
    total.changed += f.changed;
    total.leftOut += f.left_out;
    total.silent += f.silent;
  }
  if (r.judged) {
    total.judged++;
    total.compared += r.judged.compared;
    total.judgeSilent += r.judged.silent.length;
    for (const s of r.judged.silent) silentLines.push(`${r.name}: ${s.fact} ${s.subject}: ${s.detail}`);
  }
  rows.push([
    r.name,
    r.format,
    input.external ? "ext" : "repo",
    r.ok ? "ok" : `FAIL ${r.failedAt}`,
    String(r.entities),
    String(r.routes),
    String(r.notes),
    (r.importMs / 1000).toFixed(1),
    r.suite ? `${r.suite.passed}/${r.suite.failed}/${r.suite.skipped}` : "-",
    f ? String(f.carried) : "-",
    f ? String(f.changed) : "-",
    f ? String(f.left_out) : "-",
    f ? String(f.silent) : "-",
    r.judged ? String(r.judged.compared) : "-",
    r.judged ? String(r.judged.silent.length) : (r.unjudged ?? "-"),
  ]);
  process.stderr.write(`${r.name}: ${r.ok ? "ok" : `FAIL at ${r.failedAt}`}\n`);
}
rows.push([
  "TOTAL",
  "",
  "",
  `${total.ok}/${inputs.length} ok`,
  "",
  "",
  "",
  "",
  "",
  String(total.carried),
  String(total.changed),
  String(total.leftOut),
  String(total.silent),
  String(total.compared),
  `${total.judgeSilent} (${total.judged} judged)`,
]);
const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "));
console.log(`\nworking app: ${total.ok}/${inputs.length} (${inputs.length > 0 ? Math.round((100 * total.ok) / inputs.length) : 0}%)`);
console.log(
  `fidelity: ${total.carried} carried, ${total.changed} changed, ${total.leftOut} left out, ${total.silent} silent (import reports); judges: ${total.compared} facts compared, ${total.judgeSilent} silent`,
);
if (absent.length > 0)
  console.log(
    `\nexternal inputs absent from .cache/import-corpus/ (bring them per their manifest): ${absent.map((a) => a.name).join(", ")}`,
  );
if (silentLines.length > 0) console.log(`\nsilent differences:\n${silentLines.map((l) => `- ${l}`).join("\n")}`);
if (failures.length > 0) console.log(`\nfailures:\n${failures.map((f) => `- ${f.replace(/\n/g, "\n    ")}`).join("\n")}`);
