import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { needsFullTier } from "./tiers.js";

/** PostgreSQL of this machine: 127.0.0.1:5432, trust auth (see scripts/test.sh, which starts it). */
export const PG_HOST = "127.0.0.1";
export const PG_PORT = 5432;
export const PG_USER = "postgres";

export function databaseUrl(db: string): string {
  needsFullTier("PostgreSQL");
  return `postgresql://${PG_USER}@${PG_HOST}:${PG_PORT}/${db}`;
}

/** Runs SQL through psql (ON_ERROR_STOP), returning its output; throws with psql's error text. */
export function psql(db: string, sql: string, extra: string[] = []): string {
  needsFullTier("PostgreSQL");
  return execFileSync(
    "psql",
    ["-h", PG_HOST, "-p", String(PG_PORT), "-U", PG_USER, "-d", db, "-v", "ON_ERROR_STOP=1", "-X", "-q", ...extra],
    {
      input: sql,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
}

/**
 * A short tag of this checkout, so that two checkouts on one machine (git worktrees, parallel work)
 * running the same suite never drop each other's databases.
 */
const CHECKOUT_TAG = createHash("sha256").update(process.cwd()).digest("hex").slice(0, 6);

/** Drops and creates a fresh database for one test suite; its name says which suite (and checkout) owns it. */
export function freshDatabase(name: string): string {
  const safe = `${name.replace(/[^a-z0-9_]/g, "_")}_${CHECKOUT_TAG}`.slice(0, 63);
  psql("postgres", `DROP DATABASE IF EXISTS ${safe} WITH (FORCE);\nCREATE DATABASE ${safe};\n`);
  return safe;
}
