#!/usr/bin/env node
// Time of `charter factory migrate` and `charter extract --yes` on the test fixtures and on
// synthetic SQL schemas of growing size, each in a fresh process (what a user waits for), best of 3.
// No LLM is asked (--no-llm). Run after `npm run build` (done here when dist/ is missing).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const cli = join(root, "dist/cli/charter.js");
if (!existsSync(cli)) execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
const fix = join(root, "test/fixtures/importers");
const work = mkdtempSync(join(tmpdir(), "charter-bench-import-"));
let n = 0;

function timeRun(args) {
  const times = [];
  for (let k = 0; k < 3; k++) {
    const dir = join(work, `out-${n++}`);
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [cli, ...args, "--output", dir, "--no-llm"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`charter ${args.join(" ")} failed:\n${r.stdout.slice(0, 2000)}\n${r.stderr.slice(0, 2000)}`);
    times.push(ms);
  }
  return Math.min(...times);
}

/** A schema of `tables` tables, each with 8 columns, a CHECK enum and a foreign key to an earlier table. */
function syntheticSql(tables) {
  const out = [];
  for (let i = 0; i < tables; i++) {
    const fk = i > 0 ? `,\n  parent_${i % 7}_id integer REFERENCES t${Math.floor(i / 2)}(id)` : "";
    out.push(`CREATE TABLE t${i} (
  id serial PRIMARY KEY,
  name varchar(120) NOT NULL,
  code varchar(20) NOT NULL UNIQUE,
  kind text NOT NULL DEFAULT 'a' CHECK (kind IN ('a', 'b', 'c')),
  amount numeric(10,2) CHECK (amount >= 0),
  note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()${fk}
);`);
  }
  return `${out.join("\n")}\n`;
}

try {
  const version = spawnSync(process.execPath, [cli, "--version"]);
  if (version.status !== 0) throw new Error("charter --version failed");
  const rows = [
    ["factory migrate: 24-table pg_dump", ["factory", "migrate", join(fix, "sql/saas-dump.sql"), "--domain", "bench"]],
    ["factory migrate: MySQL shop", ["factory", "migrate", join(fix, "sql/shop-mysql.sql"), "--domain", "bench"]],
    [
      "factory migrate: Petstore (OpenAPI 3.0)",
      ["factory", "migrate", join(fix, "openapi/public/petstore-openapi3.yaml"), "--domain", "bench"],
    ],
    [
      "factory migrate: ReadMe API (OpenAPI 3.1, 11k lines)",
      ["factory", "migrate", join(fix, "openapi/public/readme-api.yaml"), "--domain", "bench"],
    ],
    ["factory migrate: Prisma schema", ["factory", "migrate", join(fix, "prisma/schema.prisma"), "--domain", "bench"]],
    ["extract --yes: FastAPI + SQLAlchemy", ["extract", join(fix, "codebases/fastapi_app"), "--domain", "bench", "--yes"]],
    ["extract --yes: Django", ["extract", join(fix, "codebases/django_app"), "--domain", "bench", "--yes"]],
    ["extract --yes: Express + TypeORM", ["extract", join(fix, "codebases/express_app"), "--domain", "bench", "--yes"]],
  ];
  for (const tables of [100, 250, 500]) {
    const file = join(work, `synthetic-${tables}.sql`);
    writeFileSync(file, syntheticSql(tables));
    rows.push([`factory migrate: synthetic SQL, ${tables} tables`, ["factory", "migrate", file, "--domain", "bench"]]);
  }
  const startup = (() => {
    const t = [];
    for (let k = 0; k < 3; k++) {
      const t0 = process.hrtime.bigint();
      spawnSync(process.execPath, [cli, "--version"]);
      t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return Math.min(...t);
  })();
  console.log(`node startup + CLI load (charter --version): ${startup.toFixed(0)} ms`);
  console.log("input                                                  best of 3 (ms)");
  for (const [label, args] of rows) console.log(`${label.padEnd(55)}${timeRun(args).toFixed(0).padStart(8)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
