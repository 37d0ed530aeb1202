"""The events dispatcher: hands the outbox to the in-process subscribers, off the request path.

Guarantees: an event is delivered after the write that stored it committed, at least once, and the
events of one record in the order they were stored (a record's next event waits until the one
before it is done or parked). A failed delivery (a handler raised or outlived its time) is retried
with exponential backoff; after DISPATCH_MAX_ATTEMPTS it is parked: kept, marked, logged, never
retried on its own and no longer holding back the record's later events.

On PostgreSQL several replicas share the outbox: a claim takes pending rows with
`FOR UPDATE SKIP LOCKED` (two replicas never claim the same row) and leases them by moving
`available_at` past the lease, so the events a killed replica had claimed are claimed again once
its lease runs out. Handlers get at most 90% of the lease, which keeps a live replica's claim from
expiring under it. The memory backend has one process: the outbox is its list of event dicts.
"""

import asyncio
import contextlib
import logging
import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from uuid import uuid4

from pydantic_settings import BaseSettings, SettingsConfigDict

from app import events
from app.events import Event
from app.pool import ConnectionPool

logger = logging.getLogger("app.dispatcher")


class DispatchSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Events claimed at once (at most one per record: the record's earliest pending event).
    DISPATCH_BATCH_SIZE: int = 32
    # How often the dispatcher looks for work written elsewhere: by other replicas, or by its
    # application process when it runs in a worker process (an in-process one is woken at once).
    DISPATCH_POLL_SECONDS: float = 0.25
    DISPATCH_LEASE_SECONDS: float = 120.0
    DISPATCH_MAX_ATTEMPTS: int = 8
    # The first retry waits this long, each next one twice as long, never more than an hour.
    DISPATCH_BACKOFF_SECONDS: float = 1.0
    # `process`: on PostgreSQL the dispatcher runs in a process of its own (app/worker.py);
    # `inline`: in the application process.
    DISPATCH_MODE: Literal["process", "inline"] = "process"
    # Connections of the worker process's own pool (it runs beside the application's pool).
    DISPATCH_POOL_SIZE: int = 5
    # Set by the application for its worker process: the name its claims carry.
    DISPATCH_REPLICA: str = ""


@dataclass(slots=True)
class Outcome:
    event: Event
    error: str | None = None


def backoff(settings: DispatchSettings, attempts: int) -> float:
    return float(min(settings.DISPATCH_BACKOFF_SECONDS * 2 ** max(attempts - 1, 0), 3600.0))


def replica_id(settings: DispatchSettings) -> str:
    """`host:pid:random`, the pid being the application process's (a worker's claims carry it)."""
    return f"{settings.DISPATCH_REPLICA or f'{socket.gethostname()}:{os.getpid()}'}:{uuid4().hex[:8]}"


class Dispatcher(ABC):
    """The loop shared by both outboxes: claim a batch, deliver it, settle it, repeat."""

    def __init__(self, settings: DispatchSettings) -> None:
        self.settings = settings
        self.replica = replica_id(settings)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @abstractmethod
    async def claim(self) -> list[Event]:
        """The next events to deliver (one per record at most), now leased to this replica."""

    @abstractmethod
    async def settle(self, outcomes: Sequence[Outcome]) -> None:
        """Marks delivered events done; schedules a retry of the failed ones, or parks them."""

    def wake(self) -> None:
        self._wake.set()

    async def start(self) -> None:
        events.listen(self.wake)
        self._task = asyncio.create_task(self._run(), name="events-dispatcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                batch = await self.claim()
                if batch:
                    outcomes = await asyncio.gather(*(self._deliver(event) for event in batch))
                    await self.settle(outcomes)
            except asyncio.CancelledError:
                raise
            except Exception:
                # The database went away, say: keep the loop alive and try again at the next poll.
                logger.exception("dispatching events failed; retrying")
                batch = []
            if len(batch) < self.settings.DISPATCH_BATCH_SIZE:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.DISPATCH_POLL_SECONDS)

    async def _deliver(self, event: Event) -> Outcome:
        handlers = events.handlers_for(event)
        if not handlers:
            return Outcome(event)
        try:
            async with asyncio.timeout(self.settings.DISPATCH_LEASE_SECONDS * 0.9):
                for handler in handlers:
                    await handler(event)
        except TimeoutError:
            return Outcome(event, f"a handler of {event.name} ran out of time")
        except Exception as exc:
            logger.warning("handling %s %s failed (attempt %d): %s", event.name, event.id, event.attempts, exc)
            return Outcome(event, f"{type(exc).__name__}: {exc}")
        return Outcome(event)

    def _parks(self, outcome: Outcome) -> bool:
        parked = outcome.error is not None and outcome.event.attempts >= self.settings.DISPATCH_MAX_ATTEMPTS
        if parked:
            logger.error(
                "event %s %s parked after %d attempts: %s",
                outcome.event.name,
                outcome.event.id,
                outcome.event.attempts,
                outcome.error,
            )
        return parked


_CLAIM = """
WITH next AS (
    SELECT e.seq FROM events AS e
    WHERE e.dispatched_at IS NULL AND e.parked_at IS NULL AND e.available_at <= now()
      AND NOT EXISTS (
          SELECT 1 FROM events AS p
          WHERE p.record_id = e.record_id AND p.seq < e.seq
            AND p.dispatched_at IS NULL AND p.parked_at IS NULL
      )
    ORDER BY e.seq
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE events AS e
SET claimed_by = $2, attempts = e.attempts + 1, available_at = now() + make_interval(secs => $3)
FROM next WHERE e.seq = next.seq
RETURNING e.seq, e.id, e.name, e.entity, e.record_id, e.data, e.occurred_at, e.attempts
"""

# last_error stays: a delivery that succeeded on a retry still tells what went wrong before.
_DONE = "UPDATE events SET dispatched_at = now() WHERE seq = ANY($1::bigint[])"

_FAILED = """
UPDATE events SET last_error = $2,
    available_at = now() + make_interval(secs => $3),
    parked_at = CASE WHEN $4 THEN now() END
WHERE seq = $1
"""


class PostgresDispatcher(Dispatcher):
    def __init__(self, pool: ConnectionPool, settings: DispatchSettings) -> None:
        super().__init__(settings)
        self._pool = pool
        self._seq: dict[str, int] = {}

    async def claim(self) -> list[Event]:
        rows = await self._pool.fetch(
            _CLAIM, self.settings.DISPATCH_BATCH_SIZE, self.replica, self.settings.DISPATCH_LEASE_SECONDS
        )
        self._seq = {str(row["id"]): row["seq"] for row in rows}
        rows = sorted(rows, key=lambda row: row["seq"])
        return [
            Event(
                id=str(row["id"]),
                name=row["name"],
                entity=row["entity"],
                record_id=row["record_id"],
                data=row["data"],
                occurred_at=row["occurred_at"],
                attempts=row["attempts"],
            )
            for row in rows
        ]

    async def settle(self, outcomes: Sequence[Outcome]) -> None:
        done = [self._seq[o.event.id] for o in outcomes if o.error is None]
        async with self._pool.acquire() as conn, conn.transaction():
            if done:
                await conn.execute(_DONE, done)
            for o in outcomes:
                if o.error is not None:
                    delay = backoff(self.settings, o.event.attempts)
                    await conn.execute(_FAILED, self._seq[o.event.id], o.error[:2000], delay, self._parks(o))


class MemoryDispatcher(Dispatcher):
    """The same rules over the memory store's outbox list; each event dict gains the dispatcher's
    keys (seq, attempts, available_at, dispatched_at, parked_at, last_error), like the table."""

    def __init__(self, outbox: list[dict[str, Any]], settings: DispatchSettings) -> None:
        super().__init__(settings)
        self._outbox = outbox
        # Index of the first event not yet done or parked: everything before it is settled.
        self._start = 0
        self._rows: dict[str, dict[str, Any]] = {}

    async def claim(self) -> list[Event]:
        now = datetime.now(UTC)
        blocked: set[Any] = set()
        batch: list[Event] = []
        rows = self._outbox
        while self._start < len(rows) and self._settled(rows[self._start]):
            self._start += 1
        for seq in range(self._start, len(rows)):
            row = rows[seq]
            if self._settled(row):
                continue
            record = row.get("record_id")
            first_of_record = record is None or record not in blocked
            blocked.add(record)
            if not first_of_record or row.get("available_at", now) > now:
                continue
            row["seq"] = seq
            row["attempts"] = row.get("attempts", 0) + 1
            row["available_at"] = now + timedelta(seconds=self.settings.DISPATCH_LEASE_SECONDS)
            event = Event(
                id=str(row["id"]),
                name=row["name"],
                entity=row["entity"],
                record_id=record,
                data=row["data"],
                occurred_at=row["occurred_at"],
                attempts=row["attempts"],
            )
            self._rows[event.id] = row
            batch.append(event)
            if len(batch) >= self.settings.DISPATCH_BATCH_SIZE:
                break
        return batch

    @staticmethod
    def _settled(row: dict[str, Any]) -> bool:
        return row.get("dispatched_at") is not None or row.get("parked_at") is not None

    async def settle(self, outcomes: Sequence[Outcome]) -> None:
        now = datetime.now(UTC)
        for o in outcomes:
            row = self._rows.pop(o.event.id)
            if o.error is None:
                row["dispatched_at"] = now
                continue
            row["last_error"] = o.error
            row["available_at"] = now + timedelta(seconds=backoff(self.settings, o.event.attempts))
            if self._parks(o):
                row["parked_at"] = now
