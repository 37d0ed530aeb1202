import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { VENV_BIN } from "./python.js";

const run = promisify(execFile);

interface Operation {
  operationId: string;
  "x-validation-rules"?: { rule: string; in_schema: boolean }[];
}

/**
 * The schemathesis configuration of a run, written into `dir` (with its hooks module). The only
 * checks relaxed are those for documented refusals of schema-valid data: an operation with a
 * validation rule relating fields (documented in its description and `x-validation-rules`,
 * `in_schema: false`), and a workflow move, which the record's current state allows or not. And list queries are generated without `after`, the server-issued
 * cursor (`x-query-rules`): a random string is never one. And an `Idempotency-Key` is made unique
 * per request: a generator repeats short strings, and a key repeated with another body is refused
 * with 422 as the header's IETF draft and the parameter's description say (the repeat itself is
 * tested in fastapi-write-semantics.test.ts).
 */
export function fuzzConfig(openapi: { paths: Record<string, Record<string, Operation>> }, dir: string): string {
  const ruled = Object.values(openapi.paths)
    .flatMap((ops) => Object.values(ops))
    .filter((op) => (op["x-validation-rules"] ?? []).some((r) => !r.in_schema))
    .map((op) => op.operationId);
  // A workflow move (`PUT {base_path}/{id}/state`) is allowed or not by the record's current state,
  // which no schema can say: a schema-valid target state may be refused with 400 invalid_transition
  // (docs/contracts.md, "Workflow").
  const moves = Object.entries(openapi.paths)
    .filter(([path]) => path.endsWith("/state"))
    .flatMap(([, ops]) => (ops.put ? [ops.put.operationId] : []));
  const excused = [...new Set([...ruled, ...moves])].sort();
  writeFileSync(
    join(dir, "fuzz_hooks.py"),
    [
      "import uuid",
      "",
      "import schemathesis",
      "",
      "",
      "@schemathesis.hook",
      "def map_query(context, query):",
      "    if query:",
      '        query.pop("after", None)',
      "    return query",
      "",
      "",
      "@schemathesis.hook",
      "def before_call(context, case, kwargs):",
      "    # Every phase: a valid key (1-255 characters) becomes a fresh one; an invalid one is left to be refused.",
      "    for name, value in list((case.headers or {}).items()):",
      '        if name.lower() == "idempotency-key" and isinstance(value, str) and 1 <= len(value) <= 255:',
      "            case.headers[name] = str(uuid.uuid4())",
      "    # The new key is as valid as the old one: keep the case's coverage metadata (which header a",
      "    # scenario left out, say) as generated. Private, but schemathesis is pinned (scripts/setup.sh).",
      "    case._sync_validated_hashes()",
      "",
    ].join("\n"),
  );
  // Every check (not given on the command line, which would override the operations' settings).
  const lines = ['hooks = "fuzz_hooks"', "checks.enabled = true", ""];
  if (excused.length > 0) {
    lines.push(
      "[[operations]]",
      `include-operation-id = ${JSON.stringify(excused)}`,
      "checks.positive_data_acceptance.enabled = false",
      "",
    );
  }
  const file = join(dir, "schemathesis.toml");
  writeFileSync(file, lines.join("\n"));
  return file;
}

export interface FuzzRun {
  /** Exit code of `st run` (0: no failure found). */
  code: number;
  output: string;
  /** Test cases generated, from the summary line. */
  generated: number;
}

/**
 * Runs schemathesis (every check; coverage, fuzzing and stateful phases; seeded; one worker) against
 * a running app. `dir` receives the configuration, the hooks and the JUnit report.
 */
export async function runSchemathesis(options: {
  baseUrl: string;
  dir: string;
  seed: number;
  maxExamples: number;
  token?: string;
}): Promise<FuzzRun> {
  const openapi = (await (
    await fetch(`${options.baseUrl}/openapi.json`, {
      headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
    })
  ).json()) as { paths: Record<string, Record<string, Operation>> };
  const config = fuzzConfig(openapi, options.dir);
  const args = [
    "--config-file",
    config,
    "run",
    `${options.baseUrl}/openapi.json`,
    "--phases",
    "coverage,fuzzing,stateful",
    "--seed",
    String(options.seed),
    "--max-examples",
    String(options.maxExamples),
    // One worker: a seeded run is then reproducible, and the schemathesis of Python 3.11 can hit a
    // CPython AST race ("recursion depth mismatch") parsing hypothesis lambdas in two threads.
    "--workers",
    "1",
    ...(options.token ? ["--header", `Authorization: Bearer ${options.token}`] : []),
    "--no-color",
    "--report",
    "junit",
    "--report-junit-path",
    join(options.dir, "report.json"),
  ];
  let output = "";
  let code = 0;
  try {
    const r = await run(join(VENV_BIN, "st"), args, {
      cwd: options.dir,
      env: { ...process.env, PYTHONPATH: options.dir },
      maxBuffer: 64 * 1024 * 1024,
    });
    output = r.stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    output = `${err.stdout ?? ""}${err.stderr ?? ""}`;
    code = typeof err.code === "number" ? err.code : 1;
  }
  return { code, output, generated: Number(/(\d+) generated/.exec(output)?.[1] ?? 0) };
}
