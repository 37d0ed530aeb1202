"""Creates that arrive together, written together: one multi-row INSERT for many requests.

Under load, many requests create records of the same entity at once. Each INSERT sent on its own
costs a round trip, a statement and a commit; sent together, one of each serves them all, which
halves what PostgreSQL spends per created record and saves the app a query per record
(bench/backend.mjs: the create scenario, and BENCH_MODE=batches for each load). A create goes to
the database at once while fewer than `room` statements of its entity are in flight (the
repository gives room for one: a create that finds no other being written goes at once). Past that, it joins the creates of the same key (columns and events) that
reach this point in the same turn of the event loop, and the first of them sends them all at the
end of that turn (or writes its own alone, if none came): there is no timer.

What each request sees stays what it would be on its own:
- A group is written in chunks of 1, 2, 4, ... rows (at most `largest`), so that a key has a
  handful of statements, each prepared once per connection, rather than one per number of rows.
- The rows of a chunk commit together, in one statement. If a row breaks a constraint or holds a
  value the database (or the driver) refuses (`faults`), nothing of the chunk is written, and each
  of its rows is written again on its own: only the request whose row is at fault gets the error
  (a duplicate is a 409, as without batching).
- Any other failure (no connection came free, the connection broke) is the answer of every request
  of the chunk: as on its own, nothing is retried when the outcome is unknown.
- A request cancelled while it waits (its client left) takes no row out of its chunk: its record is
  written all the same, as it would be had the cancel come just after its INSERT.
- The chunk's statement runs in a task of its own, in the context of the request that opened the
  group: a trace shows the statement under that request.
"""

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from app.repositories.base import Record

Row = list[Any]
# Writes the rows of one chunk and returns their records in the same order.
Write = Callable[[Any, list[Row]], Awaitable[list[Record]]]
_Waiter = tuple[Row, "asyncio.Future[Record]"]


class Figures:
    """What the batches of this process wrote, for /metrics (app/observability.py)."""

    statements = 0
    rows = 0


FIGURES = Figures()


class InsertBatches:
    def __init__(
        self,
        write: Write,
        largest: Callable[[Any], int],
        faults: tuple[type[BaseException], ...],
        room: int,
    ) -> None:
        """`largest(key)`: the most rows one statement may write for `key` (a power of two);
        `faults`: the errors a single row can cause, after which each row is written on its own;
        `room`: how many statements may be in flight before creates are written together."""
        self._write = write
        self._largest = largest
        self._faults = faults
        self._room = room
        self._busy = 0
        self._waiting: dict[Hashable, list[_Waiter]] = {}
        # The chunks being written, held so that their tasks are not collected half-way.
        self._sending: set[asyncio.Task[None]] = set()

    async def insert(self, key: Hashable, row: Row) -> Record:
        waiting = self._waiting.get(key)
        if waiting is None and self._busy < self._room:
            # Room: written at once, as without batches.
            return await self._alone(key, row)
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        if waiting is not None:
            waiting.append((row, future))
            return await future
        # The first to wait sends the group at the end of this turn of the loop (its other tasks
        # run first, and the creates among them join the group).
        waiting = self._waiting[key] = [(row, future)]
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            future.cancel()  # no one waits for its record, which is written all the same
            raise
        finally:
            # Even when this request was cancelled meanwhile: the others still wait for the send.
            del self._waiting[key]
            if len(waiting) > 1:
                self._send(key, waiting)
        if len(waiting) == 1:
            # Alone after all: written in this request's own task, as without batches.
            return await self._alone(key, row)
        return await future

    async def _alone(self, key: Hashable, row: Row) -> Record:
        self._busy += 1
        try:
            records = await self._write(key, [row])
        finally:
            self._busy -= 1
        return records[0]

    def _send(self, key: Hashable, waiting: list[_Waiter]) -> None:
        largest = self._largest(key)
        start = 0
        while start < len(waiting):
            # The largest power of two that fits what is left: 13 rows go as 8, 4 and 1.
            size = min(largest, 1 << ((len(waiting) - start).bit_length() - 1))
            self._start(key, waiting[start : start + size])
            start += size

    def _start(self, key: Hashable, chunk: list[_Waiter]) -> None:
        self._busy += 1
        task = asyncio.ensure_future(self._chunk(key, chunk))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _chunk(self, key: Hashable, chunk: list[_Waiter]) -> None:
        try:
            records = await self._write(key, [row for row, _ in chunk])
        except self._faults as exc:
            if len(chunk) == 1:
                _fail(chunk, exc)
            else:
                for waiter in chunk:
                    self._start(key, [waiter])
            return
        except asyncio.CancelledError:
            for _, future in chunk:
                future.cancel()
            raise
        except Exception as exc:
            _fail(chunk, exc)
            return
        finally:
            self._busy -= 1
        if len(chunk) > 1:
            FIGURES.statements += 1
            FIGURES.rows += len(chunk)
        for (_, future), record in zip(chunk, records, strict=True):
            if not future.done():
                future.set_result(record)


def _fail(chunk: list[_Waiter], exc: BaseException) -> None:
    for _, future in chunk:
        if not future.done():
            future.set_exception(exc)
