"""The repository interface and the per-entity metadata the adapters are driven by."""

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from app import cursor

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SequenceSpec:
    """A column numbered from a database sequence, rendered through `format` ({prefix}, {n}, {n:05})."""

    column: str
    name: str
    format: str
    prefix: str

    def render(self, n: int) -> str:
        return self.format.format(prefix=self.prefix, n=n)


@dataclass(frozen=True, slots=True)
class EntityMeta:
    """What the adapters need to know about an entity; identifiers here come from the contracts only."""

    name: str
    table: str
    columns: tuple[str, ...]
    json_columns: frozenset[str] = frozenset()
    filterable: frozenset[str] = frozenset()
    # Filterable columns that also take a range: `<column>_from` (>=) and `<column>_to` (<=).
    ranged: frozenset[str] = frozenset()
    sortable: frozenset[str] = frozenset()
    # The sortable columns that are never null (NOT NULL in the schema).
    sorted_not_null: frozenset[str] = frozenset()
    searchable: tuple[str, ...] = ()
    required: frozenset[str] = frozenset()
    immutable: frozenset[str] = frozenset()
    sequence: SequenceSpec | None = None
    soft_delete: bool = False
    # `list_total: counter`: the unfiltered total is read from row_counts (see schema.sql).
    row_counter: bool = False
    # Column -> entity name of the record it references (checked by the memory adapter; the
    # database checks them with foreign keys).
    references: Mapping[str, str] = field(default_factory=dict)
    # Reference columns by `on_delete`: those that block deleting the record they point to (ON
    # DELETE RESTRICT) and those whose rows go with it (CASCADE); the others are set to null.
    restrict_delete: frozenset[str] = frozenset()
    cascade_delete: frozenset[str] = frozenset()
    default_order: tuple[str, ...] = ("id",)
    # Defaults of the columns clients cannot set (the soft-delete flag): the database has them as
    # column defaults; the memory adapter applies them from here.
    server_defaults: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ListQuery:
    limit: int = 100
    offset: int = 0
    filters: Mapping[str, Any] = field(default_factory=dict)
    # Inclusive bounds by column: the column's value is >= each `lower`, <= each `upper` (and set).
    lower: Mapping[str, Any] = field(default_factory=dict)
    upper: Mapping[str, Any] = field(default_factory=dict)
    # `field` or `-field` (descending); validated against EntityMeta.sortable.
    sort: str | None = None
    search: str | None = None
    # An opaque cursor (app/cursor.py): the page starts after the row it points at.
    after: str | None = None
    # False skips counting the matching rows (`total` is then None): a client paging with cursors
    # already knows the total from its first page.
    with_total: bool = True


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Record]
    total: int | None
    # The cursor of the next page, None on the last one.
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """What a write decided on the current record does: the columns it sets and the events it emits."""

    changes: Record
    events: Sequence[str] = ()


# Decides a write from the record as it is when the write holds it (app/workflow.py, app/rules.py);
# refuses it by raising ApiError.
Plan = Callable[[Record], Change]


@dataclass(frozen=True, slots=True)
class IdempotentCreate:
    """A create sent with an Idempotency-Key (app/idempotency.py)."""

    # The caller, the entity and the client's key, unambiguously joined: keys of different users
    # or entities never meet.
    key: str
    # Digest of the request body: the same key with another body is refused, not replayed.
    fingerprint: str
    ttl_seconds: int


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """The first response of an idempotent create, as sent, and the fingerprint of its request."""

    status: int
    body: bytes
    fingerprint: str
    replayed: bool


class Repository(ABC):
    meta: EntityMeta

    @abstractmethod
    async def list(self, query: ListQuery) -> Page: ...

    @abstractmethod
    async def get(self, record_id: UUID) -> Record | None: ...

    @abstractmethod
    async def create(self, values: Record, events: Sequence[str] = ()) -> Record:
        """Inserts a record (numbering its sequence column) and its events, atomically."""

    @abstractmethod
    async def update(
        self,
        record_id: UUID,
        changes: Record,
        events: Sequence[str] = (),
        expected_state: str | None = None,
    ) -> Record | None:
        """Applies `changes`; None when the record is absent (or no longer in `expected_state`)."""

    @abstractmethod
    async def modify(self, record_id: UUID, plan: Plan) -> Record | None:
        """Reads the record, lets `plan` decide the change (or refuse it, by raising) and applies
        it, with no other write of the record in between; None when the record is absent."""

    @abstractmethod
    async def create_once(
        self,
        request: IdempotentCreate,
        values: Record,
        events: Sequence[str],
        render: Callable[[Record], bytes],
    ) -> StoredResponse:
        """Creates the record and keeps `render(record)` as the response of `request.key`; a
        repeated key gets that response back instead, `replayed`, with the fingerprint it was
        kept with (the caller refuses a different one). Concurrent repeats wait for the first."""

    @abstractmethod
    async def delete(self, record_id: UUID, user_id: str, events: Sequence[str] = ()) -> bool:
        """Removes the record (marks it, for soft-deletable entities); False when absent."""


# (column, descending) pairs: the order of a list, most significant first.
OrderKeys = tuple[tuple[str, bool], ...]


def check_query(meta: EntityMeta, query: ListQuery) -> OrderKeys:
    """The order of the list: the requested sort column (if any), then the default order, which
    ends with the primary key so that every row has a distinct position for cursors. Refuses any
    filter, range or sort not declared (defence in depth: the query model already does)."""
    for name in query.filters:
        if name not in meta.filterable:
            raise ValueError(f"{name!r} is not a filter of {meta.name}")
    for name in (*query.lower, *query.upper):
        if name not in meta.ranged:
            raise ValueError(f"{name!r} is not a range filter of {meta.name}")
    if query.sort is None:
        return tuple((column, False) for column in meta.default_order)
    descending = query.sort.startswith("-")
    column = query.sort.removeprefix("-")
    if column not in meta.sortable:
        raise ValueError(f"{column!r} is not a sort key of {meta.name}")
    return ((column, descending), *((c, False) for c in meta.default_order if c != column))


def position(query: ListQuery, keys: OrderKeys) -> tuple[Any, ...] | None:
    """The decoded `after` cursor of the query, or None for a list from its start."""
    if query.after is None:
        return None
    if query.offset:
        raise cursor.InvalidCursor("`after` and `offset` cannot be combined; use one way of paging")
    return cursor.decode(query.after, query.sort, len(keys))


def page_of(rows: Sequence[Record], query: ListQuery, keys: OrderKeys, total: int | None) -> Page:
    """A page from up to limit + 1 rows: the extra row only tells that a next page exists."""
    items = list(rows[: query.limit])
    next_cursor = None
    if len(rows) > query.limit and items:
        last = items[-1]
        next_cursor = cursor.encode(query.sort, [last[column] for column, _ in keys])
    return Page(items=items, total=total, next_cursor=next_cursor)
