import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend } from "../support/backend.js";
import { databaseUrl, freshDatabase, psql } from "../support/postgres.js";
import { ensureVenvFromFile, runCasesInBackend } from "../support/python.js";

/**
 * The generated app reads and writes timestamptz values as ISO text (app/storage.py), where asyncpg
 * would use its own binary codec. Each case compares the two on a real PostgreSQL, through a
 * connection of the app's pool and a plain asyncpg connection, on a database whose own settings
 * are hostile to text: a TimeZone half an hour off UTC and a DateStyle that is not ISO. The script
 * prints the name of each case that passed.
 */
const CASES = `
import asyncio, sys
from datetime import date, datetime, timedelta, timezone
import asyncpg
from app.storage import _SESSION, _init_connection
from app.pool import ConnectionPool

DSN = sys.argv[1]
UTC = timezone.utc
VALUES = [
    datetime(2026, 11, 19, 5, 32, 10, 729179, tzinfo=UTC),
    datetime(2026, 11, 19, 5, 32, 10, tzinfo=UTC),
    datetime(2026, 1, 1, 0, 0, 0, 120000, tzinfo=UTC),
    datetime(2026, 6, 30, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(hours=5, minutes=45))),
    datetime(1, 1, 1, 0, 0, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
    datetime(1883, 11, 18, 12, 0, tzinfo=UTC),
    datetime.max,
    datetime.min,
    # What asyncpg takes besides aware datetimes: naive ones (local time) and dates (local midnight).
    datetime(2026, 11, 19, 5, 32, 10, 5),
    date(2026, 11, 19),
]

async def connections():
    pool = ConnectionPool(DSN, 1, _init_connection, None, _SESSION)
    await pool.open()
    return pool, await asyncpg.connect(DSN)

async def table(plain, name):
    await plain.execute(f"CREATE TABLE IF NOT EXISTS {name} (n int PRIMARY KEY, at timestamptz)")
    await plain.execute(f"TRUNCATE {name}")

async def reads_as_asyncpg_does():
    pool, plain = await connections()
    await table(plain, "written_by_asyncpg")
    for n, value in enumerate(VALUES):
        await plain.execute("INSERT INTO written_by_asyncpg VALUES ($1, $2)", n, value)
    ours = [row["at"] for row in await pool.fetch("SELECT at FROM written_by_asyncpg ORDER BY n")]
    theirs = [row["at"] for row in await plain.fetch("SELECT at FROM written_by_asyncpg ORDER BY n")]
    assert [repr(v) for v in ours] == [repr(v) for v in theirs], (ours, theirs)
    assert [v.tzinfo for v in ours] == [v.tzinfo for v in theirs]
    # A pooled connection whose time zone someone changed still reads UTC.
    async with pool.acquire() as conn:
        await conn.execute("SET TIME ZONE 'Asia/Kathmandu'")
        moved = [row["at"] for row in await conn.fetch("SELECT at FROM written_by_asyncpg WHERE n BETWEEN 0 AND 4 ORDER BY n")]
        await conn.execute("RESET TIME ZONE")
    assert [repr(v) for v in moved] == [repr(v) for v in theirs[:5]], (moved, theirs[:5])
    await pool.close(); await plain.close()

async def writes_as_asyncpg_does():
    pool, plain = await connections()
    await table(plain, "written_by_asyncpg")
    await table(plain, "written_by_app")
    for n, value in enumerate(VALUES):
        await plain.execute("INSERT INTO written_by_asyncpg VALUES ($1, $2)", n, value)
        await pool.execute("INSERT INTO written_by_app VALUES ($1, $2)", n, value)
    differ = await plain.fetch(
        "SELECT a.n, a.at::text AS theirs, b.at::text AS ours FROM written_by_asyncpg a JOIN written_by_app b USING (n) "
        "WHERE a.at IS DISTINCT FROM b.at"
    )
    assert not differ, [tuple(r) for r in differ]
    await pool.close(); await plain.close()

async def refuses_what_asyncpg_refuses():
    pool, plain = await connections()
    for value in ["2026-11-19T05:32:10Z", 1763530330, None.__class__]:
        for conn in (pool, plain):
            try:
                await conn.fetchval("SELECT $1::timestamptz", value)
            except asyncpg.DataError as error:
                assert "expected a datetime.date or datetime.datetime instance" in str(error), error
            else:
                raise AssertionError(f"{value!r} was taken")
    await pool.close(); await plain.close()

async def main():
    plain = await asyncpg.connect(DSN)
    settings = await plain.fetchrow("SELECT current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds")
    await plain.close()
    # The database's own settings reach a plain connection: the cases run against them.
    assert tuple(settings) == ("America/St_Johns", "SQL, DMY"), tuple(settings)
    for case in [
        reads_as_asyncpg_does,
        writes_as_asyncpg_does,
        refuses_what_asyncpg_refuses,
    ]:
        await case()
        print(case.__name__, flush=True)

asyncio.run(main())
`;

describe("timestamps read and written as text by the generated app", () => {
  let outDir: string;
  let backendDir: string;
  let db: string;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-timestamps-"));
    backendDir = generateBackend("bench/backend-domain", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    db = freshDatabase("charter_test_timestamps");
    psql(db, `ALTER DATABASE ${db} SET TimeZone = 'America/St_Johns';\nALTER DATABASE ${db} SET DateStyle = 'SQL, DMY';\n`);
  });

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("give the values asyncpg's own codec gives, whatever the database's TimeZone and DateStyle", () => {
    // The process's own time zone is not UTC either: naive datetimes and dates are local time.
    const env = { TZ: "Asia/Kolkata" };
    expect(runCasesInBackend(backendDir, "timestamp_cases.py", CASES, [databaseUrl(db)], env)).toEqual([
      "reads_as_asyncpg_does",
      "writes_as_asyncpg_does",
      "refuses_what_asyncpg_refuses",
    ]);
  });
});
