"""The repository interface and the per-entity metadata the adapters are driven by."""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

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
    sortable: frozenset[str] = frozenset()
    searchable: tuple[str, ...] = ()
    required: frozenset[str] = frozenset()
    immutable: frozenset[str] = frozenset()
    sequence: SequenceSpec | None = None
    soft_delete: bool = False
    # Column -> entity name of the record it references (checked by the memory adapter; the
    # database checks them with foreign keys).
    references: Mapping[str, str] = field(default_factory=dict)
    # Reference columns that block deleting the record they point to (ON DELETE RESTRICT: the
    # required ones); the database sets the other references to null (ON DELETE SET NULL).
    restrict_delete: frozenset[str] = frozenset()
    default_order: tuple[str, ...] = ("id",)
    # Defaults of the columns clients cannot set (the soft-delete flag): the database has them as
    # column defaults; the memory adapter applies them from here.
    server_defaults: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ListQuery:
    limit: int = 100
    offset: int = 0
    filters: Mapping[str, Any] = field(default_factory=dict)
    # `field` or `-field` (descending); validated against EntityMeta.sortable.
    sort: str | None = None
    search: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Record]
    total: int


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
    async def delete(self, record_id: UUID, user_id: str, events: Sequence[str] = ()) -> bool:
        """Removes the record (marks it, for soft-deletable entities); False when absent."""

    async def transition(
        self,
        record_id: UUID,
        new_state: str,
        changes: Record,
        events: Sequence[str],
        expected_state: str,
    ) -> Record | None:
        """Moves the record to `new_state` only if nobody moved it since it was read."""
        return await self.update(record_id, {**changes, "state": new_state}, events, expected_state)


def check_query(meta: EntityMeta, query: ListQuery) -> tuple[str | None, bool]:
    """The sort column and direction; refuses anything not declared (defence in depth)."""
    for name in query.filters:
        if name not in meta.filterable:
            raise ValueError(f"{name!r} is not a filter of {meta.name}")
    if query.sort is None:
        return None, False
    descending = query.sort.startswith("-")
    column = query.sort.removeprefix("-")
    if column not in meta.sortable:
        raise ValueError(f"{column!r} is not a sort key of {meta.name}")
    return column, descending
