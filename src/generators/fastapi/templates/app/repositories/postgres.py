"""The PostgreSQL adapter: asyncpg with a pool, bound parameters only.

Identifiers (table and column names) come from EntityMeta, that is from the contracts, and are
quoted; values from requests are always bound parameters. Each write and its outbox events are
one statement (a data-modifying CTE), so they commit together in a single round trip.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias
from uuid import UUID

import asyncpg

from app import events as event_bus
from app.errors import ApiError
from app.pool import ConnectionPool
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
from app.repositories.batches import InsertBatches

# The pool and a connection answer the same fetch calls: the writes below run on either, alone on
# the pool or inside a transaction on one connection.
Executor: TypeAlias = ConnectionPool | asyncpg.Connection
# A batch of creates (app/repositories/batches.py): the columns they set and their events, and the
# values of each (a module-level name, as the class's own `list` method hides the builtin there).
InsertKey: TypeAlias = tuple[tuple[str, ...], tuple[str, ...]]
Rows: TypeAlias = list[list[Any]]
Records: TypeAlias = list[Record]

# The responses of idempotent creates (the idempotency_keys table of schema.sql). A key is claimed
# by inserting its row in the transaction that creates the record: a concurrent request with the
# same key waits on that row, then reads the committed response.
_CLAIM_KEY = (
    "INSERT INTO idempotency_keys (key, fingerprint, expires_at) "
    "VALUES ($1, $2, now() + make_interval(secs => $3)) ON CONFLICT (key) DO NOTHING RETURNING true"
)
_DROP_EXPIRED_KEY = "DELETE FROM idempotency_keys WHERE key = $1 AND expires_at <= now()"
_KEPT_RESPONSE = "SELECT fingerprint, status, body FROM idempotency_keys WHERE key = $1"
_KEEP_RESPONSE = "UPDATE idempotency_keys SET status = $2, body = $3 WHERE key = $1"
_DROP_EXPIRED = "DELETE FROM idempotency_keys WHERE expires_at <= now()"
# Expired keys of other requests are swept once every this many idempotent creates.
_SWEEP_EVERY = 100

# The errors a single row of a multi-row INSERT can cause (app/repositories/batches.py): a value
# PostgreSQL refuses or asyncpg cannot encode (DataError, class 22, raised by asyncpg too before
# anything is sent), a constraint (23), a trigger raising (P0). The statement wrote nothing after any.
_ROW_FAULTS = (asyncpg.DataError, asyncpg.IntegrityConstraintViolationError, asyncpg.PLPGSQLError)
# The most rows one INSERT writes; fewer where the parameters would pass PostgreSQL's 32,767.
_MOST_ROWS = 64
_MOST_PARAMETERS = 32_767

# What a soft-deleting entity's reads add: its deleted rows are not there.
_NOT_DELETED = '"is_deleted" IS NOT TRUE'

# A list's total kept between writes (see PostgresRepository._total_columns): the version of the
# counted tables' rows, which the triggers of schema.sql advance after every write to one of them.
_VERSION = 'SELECT last_value + is_called::int AS v FROM "row_versions"'
# Whether no transaction was in progress when the statement's snapshot was taken. An empty xip is
# not enough: a transaction that took the newest id and is still running lies at or past the
# snapshot's xmax, outside its xip. So the statement takes an id of its own (no WAL is written for
# it): if that id is xmax itself, no transaction took one since the last that ended.
_QUIET = (
    "(NOT EXISTS (SELECT FROM pg_snapshot_xip(pg_current_snapshot())) "
    "AND pg_current_xact_id() = pg_snapshot_xmax(pg_current_snapshot()))"
)

_PLACEHOLDER = re.compile(r"\{(prefix|n)(?::0(\d+))?\}")


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def sequence_sql(fmt: str, prefix: str, n: str) -> str:
    """SQL rendering `fmt` with the sequence value `n`, e.g. 'CUS' || '-' || lpad(...)."""
    parts: list[str] = []
    pos = 0
    for match in _PLACEHOLDER.finditer(fmt):
        if match.start() > pos:
            parts.append(literal(fmt[pos : match.start()]))
        if match.group(1) == "prefix":
            parts.append(literal(prefix))
        elif match.group(2):
            width = int(match.group(2))
            parts.append(f"lpad({n}::text, greatest({width}, length({n}::text)), '0')")
        else:
            parts.append(f"{n}::text")
        pos = match.end()
    if pos < len(fmt):
        parts.append(literal(fmt[pos:]))
    return "(" + " || ".join(parts or ["''"]) + ")"


def keyset(
    keys: OrderKeys,
    after: tuple[Any, ...],
    default_order: bool,
    args: list[Any],
    not_null: frozenset[str],
) -> str:
    """The condition "the row comes after `after` in the order `keys`", with bound values.

    The default order (created_at, id; never null, ascending) is one row comparison that the
    (created_at, id) index answers directly. A requested sort column comes first and may be null:
    PostgreSQL puts nulls last ascending and first descending, and the condition follows that.
    After a value, the condition is bounded first (>= or <= the cursor's value), so that the
    index on the column seeks there: without the bound it is an OR, and a deep page reads every
    row before it, and the deeper the page, the slower. Descending,
    the nulls are all before any value, so every column takes the bound; ascending, only a column
    in `not_null`, as its nulls come after every value (the OR with IS NULL stays).
    """

    def bind(value: Any) -> str:
        args.append(value)
        return f"${len(args)}"

    head = () if default_order else keys[:1]
    tail_keys = keys[len(head) :]
    tail_values = after[len(head) :]
    tail = (
        f"({', '.join(ident(c) for c, _ in tail_keys)}) > ({', '.join(bind(v) for v in tail_values)})"
        if tail_keys
        else "FALSE"
    )
    if not head:
        return tail
    (column, descending), value = head[0], after[0]
    col = ident(column)
    if value is None:
        # Nulls come first descending (then every non-null row follows), last ascending.
        return f"({col} IS NOT NULL OR ({col} IS NULL AND {tail}))" if descending else f"({col} IS NULL AND {tail})"
    v = bind(value)
    if descending or column in not_null:
        bound, past = ("<=", "<") if descending else (">=", ">")
        return f"({col} {bound} {v} AND ({col} {past} {v} OR ({col} = {v} AND {tail})))"
    return f"({col} > {v} OR {col} IS NULL OR ({col} = {v} AND {tail}))"


def _conflict(exc: asyncpg.PostgresError) -> ApiError:
    detail = getattr(exc, "detail", None) or str(exc)
    return ApiError(409, "conflict", detail)


class PostgresRepository(Repository):
    def __init__(
        self, meta: EntityMeta, pool: ConnectionPool, versioned: bool = False, batch_creates: bool = True
    ) -> None:
        """`versioned`: the table's writes advance row_versions (its triggers are in place and
        enabled), so an unfiltered total may be kept between writes. `batch_creates`: creates that
        arrive while another is being written go together (app/repositories/batches.py)."""
        self.meta = meta
        self._pool = pool
        self._table = ident(meta.table)
        self._columns = meta.columns
        # The columns a create may set: the sequence column is numbered by the INSERT itself.
        self._insertable = frozenset(meta.columns) - ({meta.sequence.column} if meta.sequence else set())
        self._returning = ", ".join(ident(c) for c in meta.columns)
        self._alive = f" AND {_NOT_DELETED}" if meta.soft_delete else ""
        self._get_sql = f"SELECT {self._returning} FROM {self._table} WHERE id = $1{self._alive}"
        # The read of modify(): the row stays locked until the transaction writing it ends.
        self._lock_sql = f"{self._get_sql} FOR UPDATE"
        # The unfiltered total. With `list_total: counter`, the sum of the table's counters in
        # row_counts, which triggers keep exact (schema.sql), instead of counting every row on every
        # list; without counters (a database schema.sql has not prepared yet) the rows are counted,
        # and COALESCE runs that count only then.
        alive_rows = f" WHERE {_NOT_DELETED}" if meta.soft_delete else ""
        count_all = f"SELECT count(*) FROM {self._table}{alive_rows}"
        self._count_all_sql = (
            f"SELECT coalesce((SELECT sum(n)::bigint FROM row_counts WHERE table_name = {literal(meta.table)}), "
            f"({count_all}))"
            if meta.row_counter
            else count_all
        )
        self._idempotent_creates = 0
        self._statements: dict[tuple[Any, ...], str] = {}
        self._versioned = versioned and not meta.row_counter
        # The unfiltered total and the version it holds at, and the version the last completed list
        # read: see _total_columns.
        self._kept_total: tuple[int, int] | None = None
        self._seen_version = -1
        self._batches = (
            InsertBatches(self._insert_rows, self._most_rows, _ROW_FAULTS, room=1) if batch_creates else None
        )

    def _total_columns(self, count: str, args: list[Any], kept: tuple[int, int] | None, seen: int) -> tuple[str, str]:
        """The WITH clause and the columns that give a list its unfiltered total, counting only
        when the table may have changed since the kept total was counted.

        The count is kept with the version of row_versions it holds at, and reused while the
        version stays. It is kept only when exact at that version, which takes two conditions:
        - the version was read by a list that completed before this statement's snapshot was
          taken (`seen`, read before the statement is sent): any write advances the version after
          it is made, so every write the version counts was made before the snapshot;
        - the snapshot saw no transaction in progress (_QUIET): those writes were all committed
          (or rolled back) by then, so the count sees every one of them and nothing else.
        A write after that advances the version, and the next list counts again. The version is
        read once (MATERIALIZED) so that its columns agree; _QUIET is asked only when the version
        is the one seen, since it takes a transaction id.
        """
        args.append(kept[0] if kept is not None else -1)
        same = f"(SELECT v FROM __version) = ${len(args)}"
        args.append(seen)
        columns = (
            ", (SELECT v FROM __version) AS __version"
            f", CASE WHEN {same} THEN NULL ELSE ({count}) END AS __total"
            f", CASE WHEN {same} THEN NULL WHEN (SELECT v FROM __version) = ${len(args)} THEN {_QUIET} END AS __quiet"
        )
        return f"WITH __version AS MATERIALIZED ({_VERSION}) ", columns

    def _kept(self, first: asyncpg.Record, kept: tuple[int, int] | None, seen: int) -> int | None:
        """The total of a list read with _total_columns, keeping a count that is exact."""
        version: int = first["__version"]
        total: int | None = first["__total"]
        if total is None and kept is not None:
            total = kept[1]
        elif total is not None and version == seen and first["__quiet"]:
            self._kept_total = (version, total)
        self._seen_version = version
        return total

    def _with_events(self, write: str, events_param: int | None) -> str:
        """Wraps a write ... RETURNING in a CTE that also inserts one outbox row per event name."""
        if events_param is None:
            return write
        return (
            f"WITH rec AS ({write}), ev AS ("
            "INSERT INTO events (id, name, entity, record_id, data) "
            f"SELECT gen_random_uuid(), e.name, {literal(self.meta.name)}, rec.id, to_jsonb(rec) "
            f"FROM rec, unnest(${events_param}::text[]) AS e(name)) "
            "SELECT * FROM rec"
        )

    async def list(self, query: ListQuery) -> Page:
        keys = check_query(self.meta, query)
        after = position(query, keys)
        alive = [_NOT_DELETED] if self.meta.soft_delete else []
        where = list(alive)
        args: list[Any] = []
        for column, value in query.filters.items():
            args.append(value)
            where.append(f"{ident(column)} = ${len(args)}")
        for bounds, operator in ((query.lower, ">="), (query.upper, "<=")):
            for column, value in bounds.items():
                args.append(value)
                where.append(f"{ident(column)} {operator} ${len(args)}")
        if query.search and self.meta.searchable:
            args.append(f"%{escape_like(query.search)}%")
            n = len(args)
            where.append("(" + " OR ".join(f"{ident(c)}::text ILIKE ${n}" for c in self.meta.searchable) + ")")
        count_args = list(args)
        # The total is a query of its own (an InitPlan, run once per query), never a window over the
        # sorted rows: counting can use any index, and the page below reads only limit + 1 rows.
        unfiltered = len(where) == len(alive)
        if unfiltered:
            count = self._count_all_sql
        else:
            count = f"SELECT count(*) FROM {self._table} WHERE {' AND '.join(where)}"
        kept, seen = self._kept_total, self._seen_version
        versioned = query.with_total and self._versioned and unfiltered
        head = ""
        if versioned:
            head, total_column = self._total_columns(count, args, kept, seen)
        else:
            total_column = f", ({count}) AS __total" if query.with_total else ""
        page_where = (
            [*where, keyset(keys, after, query.sort is None, args, self.meta.sorted_not_null)]
            if after is not None
            else where
        )
        order = ", ".join(f"{ident(c)} DESC" if descending else ident(c) for c, descending in keys)
        page_sql = f" WHERE {' AND '.join(page_where)}" if page_where else ""
        # LIMIT and OFFSET are validated integers, written into the statement so the planner knows
        # them (a prepared statement's generic plan would have to guess how many rows are read).
        sql = (
            f"{head}SELECT {self._returning}{total_column} FROM {self._table}{page_sql} "
            f"ORDER BY {order} LIMIT {int(query.limit) + 1}"
        )
        if query.offset:
            sql += f" OFFSET {int(query.offset)}"
        rows = await self._pool.fetch(sql, *args)
        total: int | None = None
        if rows and versioned:
            total = self._kept(rows[0], kept, seen)
        elif rows and query.with_total:
            total = rows[0]["__total"]
        if query.with_total and total is None:
            # No row to carry the count (past the end, or nothing matches): count on its own.
            total = await self._pool.fetchval(count, *count_args)
        columns = self._columns
        # Shortest wins on purpose: a row with the total carries it past the columns. No `strict=`:
        # the keyword alone makes the zip of each row cost a third more (101 per page).
        records = [dict(zip(columns, row)) for row in rows]  # noqa: B905
        return page_of(records, query, keys, total)

    async def get(self, record_id: UUID) -> Record | None:
        row = await self._pool.fetchrow(self._get_sql, record_id)
        return dict(row) if row is not None else None

    def _insert_sql(self, columns: tuple[str, ...], with_events: bool, rows: int = 1) -> str:
        key = ("insert", columns, with_events, rows)
        sql = self._statements.get(key)
        if sql is None:
            names = [ident(c) for c in columns]
            numbered: list[str] = []
            seq = self.meta.sequence
            if seq is not None:
                names.append(ident(seq.column))
                # A subquery in each row: nextval runs once for each row.
                numbered.append(
                    f"(SELECT {sequence_sql(seq.format, seq.prefix, 's.n')} "
                    f"FROM (SELECT nextval({literal(seq.name)}) AS n) AS s)"
                )
            n = len(columns)
            values = ", ".join(
                "(" + ", ".join([*(f"${r * n + i}" for i in range(1, n + 1)), *numbered]) + ")" for r in range(rows)
            )
            write = f"INSERT INTO {self._table} ({', '.join(names)}) VALUES {values} RETURNING {self._returning}"
            sql = self._with_events(write, n * rows + 1 if with_events else None)
            self._statements[key] = sql
        return sql

    def _present(self, values: Record) -> tuple[str, ...]:
        """The columns a create sets. Unset (None) values are left to the column defaults: fewer
        parameters to encode and bind."""
        insertable = self._insertable
        return tuple(c for c, v in values.items() if v is not None and c in insertable)

    async def create(self, values: Record, events: Sequence[str] = ()) -> Record:
        if self._batches is None or values.get("id") is None:
            # Without an id before the INSERT, a record could not be told from the others of its
            # batch: it is written on its own.
            record = await self._insert(self._pool, values, events)
        else:
            columns = self._present(values)
            try:
                record = await self._batches.insert((columns, tuple(events)), [values[c] for c in columns])
            except (asyncpg.UniqueViolationError, asyncpg.ForeignKeyViolationError) as exc:
                raise _conflict(exc) from exc
        event_bus.publish(events, self.meta.name, record)
        return record

    def _most_rows(self, key: InsertKey) -> int:
        fits = (_MOST_PARAMETERS - 1) // max(1, len(key[0]))
        return min(_MOST_ROWS, 1 << (fits.bit_length() - 1))

    async def _insert_rows(self, key: InsertKey, rows: Rows) -> Records:
        """Writes the creates of a batch (app/repositories/batches.py) in one INSERT."""
        columns, events = key
        args = [value for row in rows for value in row]
        if events:
            args.append(list(events))
        sql = self._insert_sql(columns, bool(events), len(rows))
        if len(rows) == 1:
            row = await self._pool.fetchrow(sql, *args)
            assert row is not None  # INSERT ... RETURNING returns the row it inserted
            return [dict(row)]
        at = columns.index("id")
        written = await self._pool.fetch(sql, *args)
        # RETURNING promises no order: each request's record is found by its id.
        by_id = {str(record["id"]): record for record in written}
        return [dict(by_id[str(row[at])]) for row in rows]

    async def _insert(self, executor: Executor, values: Record, events: Sequence[str]) -> Record:
        columns = self._present(values)
        args: list[Any] = [values[c] for c in columns]
        if events:
            args.append(list(events))
        try:
            row = await executor.fetchrow(self._insert_sql(columns, bool(events)), *args)
        except (asyncpg.UniqueViolationError, asyncpg.ForeignKeyViolationError) as exc:
            raise _conflict(exc) from exc
        assert row is not None  # INSERT ... RETURNING returns the row it inserted
        return dict(row)

    async def update(
        self,
        record_id: UUID,
        changes: Record,
        events: Sequence[str] = (),
        expected_state: str | None = None,
    ) -> Record | None:
        record = await self._update(self._pool, record_id, changes, events, expected_state)
        if record is not None:
            event_bus.publish(events, self.meta.name, record)
        return record

    async def _update(
        self,
        executor: Executor,
        record_id: UUID,
        changes: Record,
        events: Sequence[str],
        expected_state: str | None = None,
    ) -> Record | None:
        columns = tuple(c for c in changes if c in self._columns and c != "id")
        key = ("update", columns, bool(events), expected_state is not None)
        sql = self._statements.get(key)
        args: list[Any] = [record_id, *(changes[c] for c in columns)]
        if sql is None:
            assignments = ", ".join(f"{ident(c)} = ${i}" for i, c in enumerate(columns, start=2)) or "id = id"
            condition = f"id = $1{self._alive}"
            next_param = len(columns) + 2
            if expected_state is not None:
                condition += f" AND state = ${next_param}"
                next_param += 1
            write = f"UPDATE {self._table} SET {assignments} WHERE {condition} RETURNING {self._returning}"
            sql = self._with_events(write, next_param if events else None)
            self._statements[key] = sql
        if expected_state is not None:
            args.append(expected_state)
        if events:
            args.append(list(events))
        try:
            row = await executor.fetchrow(sql, *args)
        except (asyncpg.UniqueViolationError, asyncpg.ForeignKeyViolationError) as exc:
            raise _conflict(exc) from exc
        return dict(row) if row is not None else None

    async def modify(self, record_id: UUID, plan: Plan) -> Record | None:
        # SELECT ... FOR UPDATE, the plan, then the UPDATE, in one transaction: a concurrent write
        # of the row waits until this one commits, so the plan's checks (a workflow guard, the
        # validation rules) still hold for the row the UPDATE writes.
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(self._lock_sql, record_id)
            if row is None:
                return None
            change = plan(dict(row))
            record = await self._update(conn, record_id, change.changes, change.events)
        if record is not None:
            event_bus.publish(change.events, self.meta.name, record)
        return record

    async def create_once(
        self,
        request: IdempotentCreate,
        values: Record,
        events: Sequence[str],
        render: Callable[[Record], bytes],
    ) -> StoredResponse:
        self._idempotent_creates += 1
        if self._idempotent_creates % _SWEEP_EVERY == 0:
            await self._pool.execute(_DROP_EXPIRED)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(_DROP_EXPIRED_KEY, request.key)
            claimed = await conn.fetchval(_CLAIM_KEY, request.key, request.fingerprint, request.ttl_seconds)
            if not claimed:
                kept = await conn.fetchrow(_KEPT_RESPONSE, request.key)
                if kept is None or kept["status"] is None:
                    # Expired and swept between the two statements: rare enough to ask for a retry.
                    raise ApiError(409, "conflict", "this Idempotency-Key is being processed; retry the request")
                return StoredResponse(kept["status"], kept["body"].encode(), kept["fingerprint"], replayed=True)
            record = await self._insert(conn, values, events)
            body = render(record)
            await conn.execute(_KEEP_RESPONSE, request.key, 201, body.decode())
        event_bus.publish(events, self.meta.name, record)
        return StoredResponse(201, body, request.fingerprint, replayed=False)

    async def delete(self, record_id: UUID, user_id: str, events: Sequence[str] = ()) -> bool:
        if self.meta.soft_delete:
            write = (
                f"UPDATE {self._table} SET is_deleted = true, deleted_at = now(), deleted_by = $2 "
                f"WHERE id = $1{self._alive} RETURNING {self._returning}"
            )
            args: list[Any] = [record_id, user_id]
        else:
            write = f"DELETE FROM {self._table} WHERE id = $1 RETURNING {self._returning}"
            args = [record_id]
        if events:
            args.append(list(events))
        try:
            row = await self._pool.fetchrow(self._with_events(write, len(args) if events else None), *args)
        except asyncpg.ForeignKeyViolationError as exc:
            raise _conflict(exc) from exc
        if row is None:
            return False
        event_bus.publish(events, self.meta.name, dict(row))
        return True
