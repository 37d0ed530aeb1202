import type { Clock } from "../clock.js";
import { HealerError } from "../errors.js";
import { redactUrl, type TicketStore } from "./store.js";
import { PostgresTicketStore } from "./store-postgres.js";
import { SqliteTicketStore } from "./store-sqlite.js";

/** The variable that moves the ticket store to PostgreSQL. */
export const DATABASE_URL_VARIABLE = "HEALER_DATABASE_URL";

/**
 * The store a Healer uses: PostgreSQL when a `postgres://` (or `postgresql://`) URL is given,
 * else the SQLite file. Anything else in the URL is refused with the variable's name, so a typo
 * never silently falls back to a private SQLite queue.
 */
export function openTicketStore(options: { sqlitePath: string; databaseUrl?: string | undefined; now?: Clock }): TicketStore {
  const url = options.databaseUrl?.trim();
  const clock = options.now ? { now: options.now } : {};
  if (!url) return new SqliteTicketStore(options.sqlitePath, clock);
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new HealerError(
      "invalid_state",
      `${DATABASE_URL_VARIABLE} must be a postgres:// or postgresql:// URL (got ${JSON.stringify(redactUrl(url))})`,
    );
  }
  return new PostgresTicketStore(url, clock);
}
