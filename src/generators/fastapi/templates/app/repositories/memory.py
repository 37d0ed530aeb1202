"""The in-memory adapter, for demos, tests and `charter dev`: records live in the process, and a
snapshot file (MEMORY_SNAPSHOT, which `charter dev` sets) carries them across restarts."""

import asyncio
import copy
import logging
import os
import pickle
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from app import events as event_bus
from app.errors import ApiError
from app.repositories.base import (
    EntityMeta,
    IdempotentCreate,
    ListQuery,
    OrderKeys,
    Page,
    Plan,
    Record,
    Repository,
    StoredResponse,
    check_query,
    page_of,
    position,
)

logger = logging.getLogger("app.memory")


def comes_after(row: Record, keys: OrderKeys, after: tuple[Any, ...]) -> bool:
    """Whether `row` sorts after the position `after` (the same rule as the SQL keyset condition)."""
    for (column, descending), mark in zip(keys, after, strict=True):
        value = row.get(column)
        if value == mark:
            continue
        if value is None:  # nulls: after everything ascending, before everything descending
            return not descending
        if mark is None:
            return descending
        return bool(value < mark) if descending else bool(value > mark)
    return False


@dataclass(slots=True)
class _Held:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class KeyedLocks:
    """One asyncio lock per key (a record id, an idempotency key), dropped when nobody holds or
    waits for it: writes of one record run one after the other, writes of others do not wait."""

    def __init__(self) -> None:
        self._held: dict[Hashable, _Held] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held()
        held.users += 1
        try:
            async with held.lock:
                yield
        finally:
            held.users -= 1
            if held.users == 0:
                del self._held[key]


@dataclass(frozen=True, slots=True)
class _Kept:
    status: int
    body: bytes
    fingerprint: str
    expires_at: float


class MemoryStore:
    """All repositories of one process, sharing the events outbox (a list) and the responses of
    idempotent creates (a map with a time to live)."""

    def __init__(self, entities: Sequence[EntityMeta]) -> None:
        self.events: list[dict[str, Any]] = []
        # In insertion order, which is expiry order (one TTL for all): expired entries are at the front.
        self.idempotency: OrderedDict[str, _Kept] = OrderedDict()
        self.idempotency_locks = KeyedLocks()
        self.repositories: dict[str, MemoryRepository] = {meta.name: MemoryRepository(meta, self) for meta in entities}

    def save(self, path: Path) -> int:
        """Writes every record (and each numbering counter) to `path`, atomically; returns the count.

        pickle keeps the values' Python types (UUID, datetime, Decimal) exactly; the file is this
        process's own, written and read on the developer's machine only.
        """
        data: dict[str, dict[str, Any]] = {
            name: {"rows": list(repo._rows.values()), "counter": repo._counter}
            for name, repo in self.repositories.items()
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with temp.open("wb") as out:
            pickle.dump(data, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
        return sum(len(d["rows"]) for d in data.values())

    def restore(self, path: Path) -> int:
        """Loads a snapshot written by `save` into this (empty) store, under the current contracts:
        fields no longer defined are dropped, new ones start empty (their server default when they
        have one), and a record that lacks a value for a new required field is left out and
        reported. Returns how many records were restored."""
        try:
            with path.open("rb") as src:
                data: dict[str, Any] = pickle.load(src)
        except FileNotFoundError:
            return 0
        except Exception as e:  # a truncated or foreign file must not stop the app from starting
            logger.warning("memory snapshot %s not restored: %s", path, e)
            return 0
        restored = 0
        for name, saved in data.items():
            repo = self.repositories.get(name)
            if repo is None:
                logger.warning("memory snapshot: entity %s is no longer defined; its records are dropped", name)
                continue
            columns = repo.meta.columns
            for old in saved["rows"]:
                row: Record = dict.fromkeys(columns)
                row.update(repo.meta.server_defaults)
                row.update({k: v for k, v in old.items() if k in row})
                missing = sorted(c for c in repo.meta.required if row.get(c) is None)
                if missing:
                    logger.warning(
                        "memory snapshot: %s %s left out: no value for the new required field(s) %s",
                        name,
                        row.get("id"),
                        ", ".join(missing),
                    )
                    continue
                repo._rows[row["id"]] = row
                restored += 1
            repo._counter = max(repo._counter, int(saved.get("counter", 0)))
        return restored

    def referrers(self, entity: str) -> list[tuple["MemoryRepository", str]]:
        """The (repository, column) pairs whose column references records of `entity`."""
        return [
            (repo, column)
            for repo in self.repositories.values()
            for column, target in repo.meta.references.items()
            if target == entity
        ]


class MemoryRepository(Repository):
    def __init__(self, meta: EntityMeta, store: MemoryStore) -> None:
        self.meta = meta
        self._store = store
        self._rows: dict[UUID, Record] = {}
        self._counter = 0
        self._locks = KeyedLocks()

    def _visible(self, row: Record) -> bool:
        return not (self.meta.soft_delete and row.get("is_deleted"))

    def _check_references(self, values: Mapping[str, Any]) -> None:
        for column, target in self.meta.references.items():
            value = values.get(column)
            if value is None:
                continue
            other = self._store.repositories.get(target)
            if other is not None and value not in other._rows:
                raise ApiError(409, "conflict", f"{column} refers to a {target} that does not exist", {"field": column})

    def _record_events(self, names: Sequence[str], row: Record) -> None:
        now = datetime.now(UTC)
        for name in names:
            self._store.events.append(
                {
                    "id": uuid4(),
                    "name": name,
                    "entity": self.meta.name,
                    "record_id": row["id"],
                    "data": copy.deepcopy(row),
                    "occurred_at": now,
                }
            )

    async def list(self, query: ListQuery) -> Page:
        keys = check_query(self.meta, query)
        after = position(query, keys)
        rows = [row for row in self._rows.values() if self._visible(row)]
        for column, value in query.filters.items():
            rows = [row for row in rows if row.get(column) == value]
        # As SQL compares: a row without a value is outside every range.
        for column, bound in query.lower.items():
            rows = [row for row in rows if row.get(column) is not None and row[column] >= bound]
        for column, bound in query.upper.items():
            rows = [row for row in rows if row.get(column) is not None and row[column] <= bound]
        if query.search:
            needle = query.search.casefold()
            rows = [
                row
                for row in rows
                if any(needle in str(row.get(column) or "").casefold() for column in self.meta.searchable)
            ]
        total = len(rows) if query.with_total else None
        # Stable sorts from the least significant key up. As in PostgreSQL, missing values sort
        # last ascending and first descending.
        for column, descending in reversed(keys):
            present = [row for row in rows if row.get(column) is not None]
            absent = [row for row in rows if row.get(column) is None]
            present.sort(key=itemgetter(column), reverse=descending)
            rows = absent + present if descending else present + absent
        if after is not None:
            rows = [row for row in rows if comes_after(row, keys, after)]
        page = rows[query.offset : query.offset + query.limit + 1]
        return page_of([copy.deepcopy(row) for row in page], query, keys, total)

    async def get(self, record_id: UUID) -> Record | None:
        row = self._rows.get(record_id)
        return copy.deepcopy(row) if row is not None and self._visible(row) else None

    async def create(self, values: Record, events: Sequence[str] = ()) -> Record:
        self._check_references(values)
        row: Record = dict.fromkeys(self.meta.columns)
        row.update(copy.deepcopy(self.meta.server_defaults))
        row.update(copy.deepcopy(values))
        if row.get("id") is None:
            row["id"] = uuid4()
        if row["id"] in self._rows:
            raise ApiError(409, "conflict", f"{self.meta.name} {row['id']} already exists")
        if self.meta.sequence is not None:
            self._counter += 1
            row[self.meta.sequence.column] = self.meta.sequence.render(self._counter)
        self._rows[row["id"]] = row
        self._record_events(events, row)
        event_bus.publish(events, self.meta.name, row)
        return copy.deepcopy(row)

    async def update(
        self,
        record_id: UUID,
        changes: Record,
        events: Sequence[str] = (),
        expected_state: str | None = None,
    ) -> Record | None:
        async with self._locks.hold(record_id):
            return self._apply(record_id, changes, events, expected_state)

    def _apply(
        self,
        record_id: UUID,
        changes: Record,
        events: Sequence[str] = (),
        expected_state: str | None = None,
    ) -> Record | None:
        row = self._rows.get(record_id)
        if row is None or not self._visible(row):
            return None
        if expected_state is not None and row.get("state") != expected_state:
            return None
        self._check_references(changes)
        row.update(copy.deepcopy(changes))
        self._record_events(events, row)
        event_bus.publish(events, self.meta.name, row)
        return copy.deepcopy(row)

    async def modify(self, record_id: UUID, plan: Plan) -> Record | None:
        # The lock, not the absence of an await between the read and the write, is what keeps
        # other writes of the record out: a plan may one day await.
        async with self._locks.hold(record_id):
            row = self._rows.get(record_id)
            if row is None or not self._visible(row):
                return None
            change = plan(copy.deepcopy(row))
            return self._apply(record_id, change.changes, change.events)

    async def create_once(
        self,
        request: IdempotentCreate,
        values: Record,
        events: Sequence[str],
        render: Callable[[Record], bytes],
    ) -> StoredResponse:
        kept_responses = self._store.idempotency
        async with self._store.idempotency_locks.hold(request.key):
            now = time.monotonic()
            while kept_responses:
                oldest = next(iter(kept_responses.values()))
                if oldest.expires_at > now:
                    break
                kept_responses.popitem(last=False)
            kept = kept_responses.get(request.key)
            if kept is not None:
                return StoredResponse(kept.status, kept.body, kept.fingerprint, replayed=True)
            record = await self.create(values, events)
            response = StoredResponse(201, render(record), request.fingerprint, replayed=False)
            kept_responses[request.key] = _Kept(
                response.status, response.body, request.fingerprint, now + request.ttl_seconds
            )
            return response

    def _release(self, record_id: UUID) -> None:
        """What the foreign keys do on DELETE, as PostgreSQL does it for the whole statement: every
        record reached through CASCADE references goes too, a RESTRICT reference to any of them
        refuses it all (409), and the other references are set to null. Soft-deleted referrers
        count: their rows are kept, as in the database."""
        doomed: dict[tuple[str, UUID], MemoryRepository] = {(self.meta.name, record_id): self}
        pending = [(self, record_id)]
        while pending:
            target, target_id = pending.pop()
            for repo, column in self._store.referrers(target.meta.name):
                if column not in repo.meta.cascade_delete:
                    continue
                for other_id, row in repo._rows.items():
                    key = (repo.meta.name, other_id)
                    if row.get(column) == target_id and key not in doomed:
                        doomed[key] = repo
                        pending.append((repo, other_id))
        for (name, target_id), target in doomed.items():
            for repo, column in self._store.referrers(name):
                if column not in repo.meta.restrict_delete:
                    continue
                for other_id, row in repo._rows.items():
                    if row.get(column) == target_id and (repo.meta.name, other_id) not in doomed:
                        raise ApiError(
                            409,
                            "conflict",
                            f"{target.meta.name} {target_id} is still referenced from {repo.meta.table}.{column}",
                            {"entity": repo.meta.name, "field": column},
                        )
        for (name, target_id), target in doomed.items():
            if target_id != record_id or target is not self:
                target._rows.pop(target_id, None)
            for repo, column in self._store.referrers(name):
                for row in repo._rows.values():
                    if row.get(column) == target_id:
                        row[column] = None

    async def delete(self, record_id: UUID, user_id: str, events: Sequence[str] = ()) -> bool:
        async with self._locks.hold(record_id):
            return self._remove(record_id, user_id, events)

    def _remove(self, record_id: UUID, user_id: str, events: Sequence[str]) -> bool:
        row = self._rows.get(record_id)
        if row is None or not self._visible(row):
            return False
        if self.meta.soft_delete:
            # A soft delete is an update: references to the record stay valid.
            row.update({"is_deleted": True, "deleted_at": datetime.now(UTC), "deleted_by": user_id})
        else:
            self._release(record_id)
            del self._rows[record_id]
        self._record_events(events, row)
        event_bus.publish(events, self.meta.name, row)
        return True
