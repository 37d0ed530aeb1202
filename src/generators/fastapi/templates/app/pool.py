"""The PostgreSQL connections: a fixed set, opened at start and handed out first come, first served.

asyncpg's own Pool costs more per query than a local query's round trip: every acquire builds a
proxy and a future and re-arms an inactivity timer, every release runs in a task of its own, and a
request arriving late may take a freed connection before those already waiting (under load, a few
requests wait many times longer than the rest). This pool is a queue of open connections and a
queue of waiting requests, nothing more: what it must still get right is below.

- Every connection opens at start, so a burst never waits for new ones; the deployment guides
  budget DATABASE_POOL_SIZE connections per process anyway.
- A connection found closed (the database restarted, or the connection was terminated) is reopened
  by the next request that takes it.
- A query cancelled half-way (the request was cancelled, or timed out) is cancelled on the server
  too, by asyncpg, and the connection's next query waits until that is done: it goes back to the
  pool. So does one after any other error, PostgreSQL's or the caller's own.
- A connection that failed at the network level, or that comes back inside a transaction (which
  would carry into the next request), is closed instead and its place reopened.
- A request waits for a connection at most `timeout` seconds (DATABASE_POOL_TIMEOUT_SECONDS), then
  fails with PoolTimeoutError (a 503 with Retry-After, app/errors.py): under a burst larger than
  the pool, or with connections held by slow queries, callers get an answer they can retry rather
  than a queue that grows without end.
- No session state is reset between requests (asyncpg's pool runs a reset query after each
  release): nothing here sets any on a pooled connection (no SET, LISTEN, advisory lock or cursor
  outside a transaction). Code that needs session state opens a connection of its own.
"""

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

Setup = Callable[[asyncpg.Connection], Awaitable[None]]

# How long close() lets a connection finish its goodbye before dropping it.
_CLOSE_TIMEOUT_SECONDS = 5.0
# Failures after which a connection is not fit for another query.
_UNFIT = (OSError, asyncpg.InterfaceError)


class PoolClosedError(RuntimeError):
    """The pool closed while the caller waited for a connection."""


class PoolTimeoutError(RuntimeError):
    """No connection came free within the pool's wait timeout."""


class ConnectionPool:
    def __init__(
        self,
        dsn: str,
        size: int,
        setup: Setup,
        timeout: float | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        """`timeout`: seconds a caller waits for a busy pool to free a connection (None: no limit).
        `settings`: the session settings each connection starts with (its startup packet)."""
        if size < 1:
            raise ValueError(f"a pool needs at least one connection, got {size}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"a pool's wait timeout must be positive, got {timeout}")
        self._dsn = dsn
        self._size = size
        self._setup = setup
        self._timeout = timeout
        self._settings = dict(settings) if settings else None
        # An idle slot holds a connection, or None when its connection must be (re)opened.
        self._idle: deque[asyncpg.Connection | None] = deque()
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._closed = False
        # Connections given back after close(), while they say goodbye (held so the task is not lost).
        self._closing: set[asyncio.Task[None]] = set()
        # Times a caller found no idle connection and queued (read by /metrics, app/observability.py).
        self.waits = 0

    @property
    def size(self) -> int:
        return self._size

    def stats(self) -> tuple[int, int, int, int]:
        """Size, connections handed out, callers waiting now, and waits so far."""
        return self._size, self._size - len(self._idle), len(self._waiters), self.waits

    async def open(self) -> None:
        connections = await asyncio.gather(*(self._connect() for _ in range(self._size)), return_exceptions=True)
        failure = next((c for c in connections if isinstance(c, BaseException)), None)
        if failure is not None:
            for c in connections:
                if isinstance(c, asyncpg.Connection):
                    c.terminate()
            raise failure
        self._idle.extend(c for c in connections if isinstance(c, asyncpg.Connection))

    async def close(self) -> None:
        """Closes the idle connections now and each busy one when it is given back."""
        self._closed = True
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(PoolClosedError("the database pool is closed"))
        idle = [c for c in self._idle if c is not None]
        self._idle.clear()
        await asyncio.gather(*(_close(c) for c in idle))

    async def _connect(self) -> asyncpg.Connection:
        conn = await asyncpg.connect(self._dsn, server_settings=self._settings)
        try:
            await self._setup(conn)
        except BaseException:
            conn.terminate()
            raise
        return conn

    async def _take(self) -> asyncpg.Connection:
        if self._closed:
            raise PoolClosedError("the database pool is closed")
        if self._idle:
            conn = self._idle.popleft()
        else:
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[asyncpg.Connection | None] = loop.create_future()
            self._waiters.append(waiter)
            self.waits += 1
            # A timer only for callers that wait: taking an idle connection costs nothing extra. An
            # expired waiter stays queued, done, and _give() passes over it.
            expiry = None if self._timeout is None else loop.call_later(self._timeout, _expire, waiter, self._timeout)
            try:
                conn = await waiter
            except asyncio.CancelledError:
                # Handed a connection just as the wait was cancelled: pass it on.
                if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self._give(waiter.result())
                raise
            finally:
                if expiry is not None:
                    expiry.cancel()
        if conn is not None and not conn.is_closed():
            return conn
        try:
            return await self._connect()
        except BaseException:
            self._give(None)
            raise

    def _give(self, conn: asyncpg.Connection | None) -> None:
        if self._closed:
            if conn is not None:
                task = asyncio.get_running_loop().create_task(_close(conn))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        self._idle.append(conn)

    def _give_back(self, conn: asyncpg.Connection, failure: BaseException | None) -> None:
        """Returns a connection after use, or its slot to be reopened if the connection is unfit."""
        if conn.is_closed():
            self._give(None)
        elif isinstance(failure, _UNFIT) or conn.is_in_transaction():
            conn.terminate()
            self._give(None)
        else:
            self._give(conn)

    async def _query(self, method: str, sql: str, args: tuple[Any, ...]) -> Any:
        """One statement on a connection of the pool: `method` names the asyncpg call."""
        conn = await self._take()
        try:
            result = await getattr(conn, method)(sql, *args)
        except BaseException as exc:
            self._give_back(conn, exc)
            raise
        self._give(conn)
        return result

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        rows: list[asyncpg.Record] = await self._query("fetch", sql, args)
        return rows

    async def fetchrow(self, sql: str, *args: Any) -> asyncpg.Record | None:
        row: asyncpg.Record | None = await self._query("fetchrow", sql, args)
        return row

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._query("fetchval", sql, args)

    async def execute(self, sql: str, *args: Any) -> str:
        status: str = await self._query("execute", sql, args)
        return status

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[asyncpg.Connection]:
        """A connection for several statements (a transaction); given back when the block ends."""
        conn = await self._take()
        try:
            yield conn
        except BaseException as exc:
            self._give_back(conn, exc)
            raise
        self._give_back(conn, None)


def _expire(waiter: asyncio.Future[asyncpg.Connection | None], timeout: float) -> None:
    if not waiter.done():
        waiter.set_exception(PoolTimeoutError(f"no database connection came free within {timeout:g} s"))


async def _close(conn: asyncpg.Connection) -> None:
    try:
        await conn.close(timeout=_CLOSE_TIMEOUT_SECONDS)
    except Exception:
        conn.terminate()
