import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateBackend, type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { until } from "../support/poll.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenvFromFile, runCasesInBackend } from "../support/python.js";
import { client } from "./http.js";

/**
 * The generated app's connection pool (app/pool.py) against a real PostgreSQL: the order it hands
 * connections out in, and what it does with connections that come back unfit. Each case is a
 * Python function that raises on failure; the script prints the name of each case that passed.
 */
const CASES = `
import asyncio, sys
import asyncpg
from app.pool import ConnectionPool, PoolClosedError, PoolTimeoutError

DSN = sys.argv[1]

async def setup(conn):
    await conn.execute("SET application_name = 'charter_pool_test'")

async def pid(pool):
    return await pool.fetchval("SELECT pg_backend_pid()")

async def first_come_first_served():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    order = []
    async def use(name):
        async with pool.acquire() as conn:
            order.append(name)
            await conn.execute("SELECT pg_sleep(0.02)")
    barger = []
    async def hold():
        await use("holder")
        # The connection just went to w0, which has not run yet: a request asking at this very
        # moment must not take it, it queues behind everyone already waiting.
        barger.append(asyncio.create_task(use("barger")))
    holder = asyncio.create_task(hold())
    await asyncio.sleep(0.005)
    waiters = [asyncio.create_task(use(f"w{i}")) for i in range(5)]
    await asyncio.gather(holder, *waiters)
    await barger[0]
    assert order == ["holder", "w0", "w1", "w2", "w3", "w4", "barger"], order
    await pool.close()

async def cancelled_waiter_passes_its_turn_on():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    async with pool.acquire():
        waiting = asyncio.create_task(pool.fetchval("SELECT 1"))
        await asyncio.sleep(0.01)
        waiting.cancel()
    assert await asyncio.wait_for(pool.fetchval("SELECT 2"), 2) == 2
    await pool.close()

async def postgres_errors_keep_the_connection():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    before = await pid(pool)
    try:
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT 1 / 0")
    except asyncpg.DivisionByZeroError:
        pass
    try:
        await pool.fetchval("SELECT nope")
    except asyncpg.UndefinedColumnError:
        pass
    # An error of the caller's own inside the block: the transaction rolls back, the connection stays.
    try:
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT 1")
            raise KeyError("the caller's")
    except KeyError:
        pass
    assert await pid(pool) == before
    await pool.close()

async def terminated_connection_is_reopened():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    victim = await pid(pool)
    killer = await asyncpg.connect(DSN)
    await killer.execute("SELECT pg_terminate_backend($1)", victim)
    await killer.close()
    await asyncio.sleep(0.1)
    # The next use may fail (the connection's end is noticed by using it); the one after reconnects.
    try:
        await pool.fetchval("SELECT 1")
    except (asyncpg.InterfaceError, asyncpg.PostgresError, OSError):
        pass
    fresh = await pid(pool)
    assert fresh != victim, (fresh, victim)
    await pool.close()

async def cancelled_query_is_cancelled_on_the_server():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    sleeper = await pid(pool)
    task = asyncio.create_task(pool.fetchval("SELECT pg_sleep(30)"))
    await asyncio.sleep(0.2)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    # The connection serves the next query as soon as the server has given up the sleep.
    assert await asyncio.wait_for(pid(pool), 5) == sleeper
    watcher = await asyncpg.connect(DSN)
    running = await watcher.fetchval("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'")
    assert running == 0, running
    await watcher.close()
    await pool.close()

async def open_transaction_is_not_handed_on():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    leaked = await pid(pool)
    async with pool.acquire() as conn:
        await conn.execute("BEGIN")
    assert await pid(pool) != leaked
    await pool.close()

async def close_refuses_waiters_and_closes_busy_connections():
    pool = ConnectionPool(DSN, 1, setup)
    await pool.open()
    async with pool.acquire() as conn:
        waiting = asyncio.create_task(pool.fetchval("SELECT 1"))
        await asyncio.sleep(0.01)
        await pool.close()
        try:
            await waiting
            raise AssertionError("a waiter got a connection from a closed pool")
        except PoolClosedError:
            pass
    await asyncio.sleep(0.2)
    assert conn.is_closed()
    try:
        await pool.fetchval("SELECT 1")
        raise AssertionError("a closed pool answered")
    except PoolClosedError:
        pass

async def waiter_times_out_and_the_pool_goes_on():
    pool = ConnectionPool(DSN, 1, setup, timeout=0.2)
    await pool.open()
    loop = asyncio.get_running_loop()
    async with pool.acquire():
        started = loop.time()
        try:
            await pool.fetchval("SELECT 1")
            raise AssertionError("a waiter got a connection the holder still had")
        except PoolTimeoutError as exc:
            waited = loop.time() - started
            assert 0.15 <= waited < 2, waited
            assert "0.2 s" in str(exc), str(exc)
    # The expired waiter took nothing with it: the connection serves the next caller.
    assert await asyncio.wait_for(pool.fetchval("SELECT 3"), 2) == 3
    await pool.close()

async def open_fails_whole():
    pool = ConnectionPool(DSN.rsplit("/", 1)[0] + "/charter_no_such_database", 2, setup)
    try:
        await pool.open()
        raise AssertionError("opened a pool on a database that does not exist")
    except asyncpg.InvalidCatalogNameError:
        pass

async def main():
    for case in [
        first_come_first_served,
        cancelled_waiter_passes_its_turn_on,
        postgres_errors_keep_the_connection,
        terminated_connection_is_reopened,
        cancelled_query_is_cancelled_on_the_server,
        open_transaction_is_not_handed_on,
        close_refuses_waiters_and_closes_busy_connections,
        waiter_times_out_and_the_pool_goes_on,
        open_fails_whole,
    ]:
        await case()
        print(case.__name__, flush=True)

asyncio.run(main())
`;

describe("the generated connection pool on a real PostgreSQL", () => {
  let outDir: string;
  let backendDir: string;
  let db: string;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), "charter-pool-"));
    backendDir = generateBackend("bench/backend-domain", outDir);
    ensureVenvFromFile(join(backendDir, "requirements.txt"));
    db = freshDatabase("charter_test_pool");
  });

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("serves in arrival order, keeps healthy connections and replaces unfit ones", () => {
    expect(runCasesInBackend(backendDir, "pool_cases.py", CASES, [databaseUrl(db)])).toEqual([
      "first_come_first_served",
      "cancelled_waiter_passes_its_turn_on",
      "postgres_errors_keep_the_connection",
      "terminated_connection_is_reopened",
      "cancelled_query_is_cancelled_on_the_server",
      "open_transaction_is_not_handed_on",
      "close_refuses_waiters_and_closes_busy_connections",
      "waiter_times_out_and_the_pool_goes_on",
      "open_fails_whole",
    ]);
  });
});

describe("the generated app with its one pooled connection held", () => {
  let root: string;
  let app: RunningBackend;
  let db: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "charter-pool-timeout-"));
    db = freshDatabase("charter_test_pool_timeout");
    app = await startGeneratedBackend({
      domainDir: "bench/backend-domain",
      outDir: join(root, "out"),
      backend: "postgres",
      databaseUrl: databaseUrl(db),
      env: { DATABASE_POOL_SIZE: "1", DATABASE_POOL_TIMEOUT_SECONDS: "0.5" },
    });
  }, 600_000);

  afterAll(async () => {
    await app?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("answers 503 with the error body and Retry-After once the wait timeout passes", async () => {
    const api = client(app.url);
    // A lock held from outside: the list below waits on it inside the pool's only connection.
    const locker = new pg.Client({ connectionString: databaseUrl(db) });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE items IN ACCESS EXCLUSIVE MODE");
      const holder = api.get("/items");
      await until(async () => {
        const { rows } = await locker.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'items'::regclass");
        return rows[0].n > 0 ? true : undefined;
      });
      const refused = await api.get("/items/00000000-0000-0000-0000-000000000001");
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        error: "service_unavailable",
        message: "no database connection came free within 0.5 s",
        request_id: refused.headers.get("x-request-id"),
      });
      expect(refused.headers.get("retry-after")).toBe("1");
      await locker.query("COMMIT");
      // The held request completes once the lock goes, and the pool serves again.
      expect((await holder).status).toBe(200);
      expect((await api.get("/items/00000000-0000-0000-0000-000000000001")).status).toBe(404);
    } finally {
      await locker.end();
    }
  });
});
