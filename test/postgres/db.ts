import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { psql } from "../support/postgres.js";

/** Runs a script the way the generated app does: all of it in one transaction, stopping at the first error. */
export function applyScript(db: string, sql: string): void {
  psql(db, sql, ["-1", "-f", "-"]);
}

/** One value per row (first column), from `psql -At`. */
export function query(db: string, sql: string): string[] {
  const out = psql(db, sql, ["-A", "-t"]).trimEnd();
  return out === "" ? [] : out.split("\n");
}

/** A single value. */
export function scalar(db: string, sql: string): string {
  const rows = query(db, sql);
  if (rows.length !== 1) throw new Error(`expected one row from ${sql}, got ${rows.length}`);
  return rows[0] as string;
}

/**
 * What the app does on start with the postgres backend (the contract agreed with the FastAPI
 * generator): create schema_migrations, apply every migration not yet recorded in name order, each
 * in its own transaction together with its record, then execute schema.sql in full. Returns the
 * versions it applied.
 */
export function startLikeApp(db: string, outDir: string): string[] {
  psql(db, "CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());\n");
  const applied = new Set(query(db, "SELECT version FROM schema_migrations"));
  const dir = join(outDir, "backend/db/migrations");
  let files: string[] = [];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
  } catch {
    files = [];
  }
  const ran: string[] = [];
  for (const f of files) {
    const version = f.slice(0, -".sql".length);
    if (applied.has(version)) continue;
    const sql = readFileSync(join(dir, f), "utf8");
    applyScript(db, `${sql}\nINSERT INTO schema_migrations (version) VALUES ('${version}');\n`);
    ran.push(version);
  }
  try {
    applyScript(db, readFileSync(join(outDir, "backend/db/schema.sql"), "utf8"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  return ran;
}

/**
 * The schema of a database as sorted text lines (columns, constraints, indexes, sequences), so two
 * databases built different ways can be compared. Column order is left out: a migrated table
 * keeps added columns at the end.
 */
export function describeSchema(db: string): string[] {
  const lines = [
    ...query(
      db,
      `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' nullable=' || is_nullable || ' default=' || coalesce(column_default, '-')
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`,
    ),
    ...query(
      db,
      `SELECT 'constraint ' || c.conrelid::regclass || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> 'schema_migrations'`,
    ),
    ...query(db, `SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`),
    ...query(db, `SELECT 'sequence ' || sequencename FROM pg_sequences WHERE schemaname = 'public'`),
  ];
  return lines.sort();
}
