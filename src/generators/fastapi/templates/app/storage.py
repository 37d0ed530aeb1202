"""Opens the storage picked by DATABASE_BACKEND and prepares the database on start."""

import logging
import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import asyncpg
import orjson

from app.pool import ConnectionPool
from app.repositories.base import EntityMeta, Repository
from app.repositories.memory import MemoryStore
from app.repositories.postgres import PostgresRepository

logger = logging.getLogger("app.storage")

# backend/db: schema.sql and migrations/ written by the `postgres` and `migrations` targets.
DB_DIR = Path(__file__).resolve().parent.parent / "db"
# Serialises schema preparation when several workers or replicas start at once (any fixed 64-bit key).
_PREPARE_LOCK = 7_311_432_201
# What prepares the database when the app does not (DATABASE_MIGRATE other than auto).
MIGRATE_COMMAND = "python -m app.migrate"


@dataclass
class Storage:
    repositories: dict[str, Repository]
    pool: ConnectionPool | None
    # The memory backend's events outbox (on PostgreSQL it is the `events` table).
    outbox: list[dict[str, Any]] | None = None
    # Why the database cannot serve this app yet (its tables are missing), or None when it can.
    unready: str | None = None
    # The error code of the 503 answered while unready.
    unready_error: str = "database_not_ready"
    # Destructive migration steps held back (`version: warning`), applied by DESTRUCTIVE_COMMAND.
    held: list[str] = field(default_factory=list)


def _json_text(value: object) -> str:
    return orjson.dumps(value).decode()


# The session settings every pooled connection starts with, whatever the database's own: timestamps
# come as ISO text in UTC (_timestamptz). The app's SQL does not depend on the session's time zone;
# code of your own on these connections sees UTC (CURRENT_DATE, ::date).
_SESSION = {"DateStyle": "ISO", "TimeZone": "UTC"}
# What asyncpg reads PostgreSQL's infinite timestamps as (naive, as it does).
_INFINITE = {"infinity": datetime.max, "-infinity": datetime.min}


def _timestamptz(text: str) -> datetime:
    """A timestamptz from its ISO text, in UTC as asyncpg's own decoder gives it.

    asyncpg builds each timestamptz from a timedelta of microseconds, several times the cost of
    datetime.fromisoformat reading the text: on a page of records, much of what decoding costs.
    The session writes ISO text in UTC (_SESSION); a value in another offset (after a SET TIME ZONE
    of your own) is moved to UTC, as the binary codec would give it."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        if text in _INFINITE:
            return _INFINITE[text]
        raise
    return value if value.tzinfo is UTC else value.astimezone(UTC)


def _timestamptz_text(value: object) -> str:
    """A timestamptz parameter as text, taking what asyncpg's own encoder takes: an aware
    datetime, a naive one (local time), a date (local midnight), or the infinities."""
    if not isinstance(value, date):
        raise TypeError(f"expected a datetime.date or datetime.datetime instance, got {type(value).__name__!r}")
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day).astimezone()
    # asyncpg writes the naive extremes as the infinities, and any other value at those instants.
    utc = value if value in _INFINITE.values() else value.astimezone(UTC)
    for text, infinite in _INFINITE.items():
        if utc.replace(tzinfo=None) == infinite:
            return text
    return utc.isoformat()


async def _init_connection(conn: asyncpg.Connection) -> None:
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, encoder=_json_text, decoder=orjson.loads, schema="pg_catalog")
    # UUIDs as text: asyncpg's own UUID type is not one orjson serialises natively, and every
    # response carries ids. Parameters may still be uuid.UUID (str() encodes them).
    await conn.set_type_codec("uuid", encoder=str, decoder=str, schema="pg_catalog", format="text")
    await conn.set_type_codec(
        "timestamptz", encoder=_timestamptz_text, decoder=_timestamptz, schema="pg_catalog", format="text"
    )


# The line the migrations target writes above every step that can lose data (postgres/convertor.ts).
_DESTRUCTIVE = "-- charter: WARNING destructive: "
# What applies the steps held back because they can lose data.
DESTRUCTIVE_COMMAND = "python -m app.migrate --allow-destructive"
# `ALTER TABLE "t" DROP COLUMN IF EXISTS "c";` as the migrations target writes it.
_DROP_COLUMN = re.compile(r'^ALTER TABLE "((?:[^"]|"")+)" DROP COLUMN IF EXISTS "((?:[^"]|"")+)";$', re.MULTILINE)


@dataclass
class Prepared:
    """What preparing the database left undone: the destructive steps held back (their warnings),
    and whether a migration could not be applied at all without them."""

    held: list[str]
    blocked: str | None = None


def migration_steps(sql: str) -> list[tuple[str, str | None]]:
    """A migration's steps in order, each with its destructive warning or None. The migrations
    target separates steps by a blank line and writes the warning as the first line of its step."""
    steps: list[tuple[str, str | None]] = []
    for block in sql.split("\n\n"):
        # A block of comments alone (the header) is no step: PostgreSQL answers it with nothing.
        if all(not line.strip() or line.lstrip().startswith("--") for line in block.split("\n")):
            continue
        first = block.lstrip().split("\n", 1)[0]
        steps.append((block, first[len(_DESTRUCTIVE) :] if first.startswith(_DESTRUCTIVE) else None))
    return steps


def _unquote(name: str) -> str:
    return name.replace('""', '"')


async def _keep_dropped_columns_writable(conn: asyncpg.Connection, step: str) -> None:
    """A column whose drop is held back stays, and the new code no longer writes it: it must not
    refuse rows for lacking a value (NOT NULL is lifted; no data is lost)."""
    for table, column in _DROP_COLUMN.findall(step):
        table, column = _unquote(table), _unquote(column)
        exists = await conn.fetchval(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = $1 AND column_name = $2 AND is_nullable = 'NO'",
            table,
            column,
        )
        if exists:
            quoted = '"' + table.replace('"', '""') + '"', '"' + column.replace('"', '""') + '"'
            await conn.execute(f"ALTER TABLE {quoted[0]} ALTER COLUMN {quoted[1]} DROP NOT NULL")


async def prepare_database(
    conn: asyncpg.Connection, db_dir: Path = DB_DIR, allow_destructive: bool = False
) -> Prepared:
    """Applies pending migrations (each in a transaction, recorded), then schema.sql in full.

    Without `allow_destructive` a step marked destructive (a dropped column or table, a narrowed
    type, NOT NULL filled on existing rows) is held back: the rest of its migration is applied and
    the step recorded in schema_migrations_held, so the old column or table stays with its data
    and the app serves the new contracts around it. When the rest cannot be applied without the
    held step, nothing of that migration (or later ones) is applied and `blocked` says why.
    With `allow_destructive` (`python -m app.migrate --allow-destructive`) the held steps are
    applied first, in one transaction with the removal of their records, then every pending
    migration in full."""
    await conn.execute("SELECT pg_advisory_lock($1)", _PREPARE_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations_held ("
            "version TEXT NOT NULL, step INTEGER NOT NULL, warning TEXT NOT NULL, sql TEXT NOT NULL, "
            "held_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (version, step))"
        )
        if allow_destructive:
            rows = await conn.fetch(
                "SELECT version, step, warning, sql FROM schema_migrations_held ORDER BY version, step"
            )
            if rows:
                async with conn.transaction():
                    for row in rows:
                        logger.warning("applying destructive step of %s: %s", row["version"], row["warning"])
                        await conn.execute(row["sql"])
                    await conn.execute("DELETE FROM schema_migrations_held")
        prepared = Prepared(held=[])
        migrations = db_dir / "migrations"
        if migrations.is_dir():
            applied = {row["version"] for row in await conn.fetch("SELECT version FROM schema_migrations")}
            for path in sorted(migrations.glob("*.sql")):
                if path.stem in applied:
                    continue
                steps = migration_steps(path.read_text(encoding="utf-8"))
                held = [(i, step, warning) for i, (step, warning) in enumerate(steps) if warning is not None]
                if allow_destructive or not held:
                    logger.info("applying migration %s", path.name)
                    async with conn.transaction():
                        await conn.execute("\n\n".join(step for step, _ in steps))
                        await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", path.stem)
                    continue
                logger.info("applying migration %s without its %d destructive step(s)", path.name, len(held))
                try:
                    async with conn.transaction():
                        for step, warning in steps:
                            if warning is None:
                                await conn.execute(step)
                            else:
                                await _keep_dropped_columns_writable(conn, step)
                        await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", path.stem)
                        await conn.executemany(
                            "INSERT INTO schema_migrations_held (version, step, warning, sql) VALUES ($1, $2, $3, $4)",
                            [(path.stem, i, warning, step) for i, step, warning in held],
                        )
                except asyncpg.PostgresError as e:
                    prepared.blocked = (
                        f"migration {path.name} cannot be applied without its destructive step(s) "
                        f"({'; '.join(w for _, _, w in held)}): {e}; run `{DESTRUCTIVE_COMMAND}`"
                    )
                    logger.error("%s", prepared.blocked)
                    return prepared
        schema = db_dir / "schema.sql"
        if schema.is_file():
            await conn.execute(schema.read_text(encoding="utf-8"))
        prepared.held = await held_steps(conn)
        return prepared
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _PREPARE_LOCK)


async def held_steps(conn: asyncpg.Connection) -> list[str]:
    """The destructive steps held back, as `version: warning`, in order (none before the table exists)."""
    if await conn.fetchval("SELECT to_regclass('schema_migrations_held')") is None:
        return []
    rows = await conn.fetch("SELECT version, warning FROM schema_migrations_held ORDER BY version, step")
    return [f"{row['version']}: {row['warning']}" for row in rows]


async def missing_tables(conn: asyncpg.Connection, tables: Sequence[str]) -> list[str]:
    """The tables of `tables` the database lacks, sorted."""
    rows = await conn.fetch(
        "SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(quote_ident(t)) IS NULL", list(tables)
    )
    return sorted(row["t"] for row in rows)


async def versioned_tables(conn: asyncpg.Connection, tables: Sequence[str]) -> set[str]:
    """The tables of `tables` whose writes advance row_versions: the sequence exists and the table
    has its enabled trigger (schema.sql installs it). Only their lists keep a total between writes;
    a table without it (a database schema.sql has not reached, or a trigger someone disabled) counts
    on every list."""
    rows = await conn.fetch(
        "SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass('row_versions') IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(quote_ident(t)) "
        "AND tgname = 'row_versions_bumped' AND tgenabled IN ('O', 'A'))",
        list(tables),
    )
    return {row["t"] for row in rows}


def unready_message(missing: Sequence[str], migrate: bool, db_dir: Path = DB_DIR) -> str:
    """What is wrong and the one thing to do about it."""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    what = f"the database has no table {shown}"
    if not (db_dir / "schema.sql").is_file() and not (db_dir / "migrations").is_dir():
        return f"{what}, and db/ holds no schema: generate the backend with the postgres and migrations targets"
    if migrate:
        return f"{what} after applying db/: check that DATABASE_URL names the app's database"
    return f"{what}: run `{MIGRATE_COMMAND}` (or start with DATABASE_MIGRATE=auto), then restart the app"


@dataclass
class DatabaseState:
    # Why the database cannot serve this app, and the error code of the 503 that says so.
    unready: str | None
    error: str = "database_not_ready"
    # Destructive migration steps held back (`version: warning`): the app serves without them.
    held: list[str] = field(default_factory=list)


async def check_database(conn: asyncpg.Connection, entities: Sequence[EntityMeta], migrate: bool) -> DatabaseState:
    """Applies db/ when `migrate` (under the advisory lock, destructive steps held back), then
    names what is still missing."""
    if migrate:
        prepared = await prepare_database(conn)
        if prepared.blocked is not None:
            return DatabaseState(prepared.blocked, "destructive_migration_pending", await held_steps(conn))
        held = prepared.held
    else:
        held = await held_steps(conn)
    missing = await missing_tables(conn, [meta.table for meta in entities] + ["events"])
    return DatabaseState(unready_message(missing, migrate) if missing else None, held=held)


@asynccontextmanager
async def open_storage(
    backend: str,
    database_url: str,
    pool_size: int,
    entities: Sequence[EntityMeta],
    pool_timeout: float | None = None,
    migrate: bool = False,
    batch_creates: bool = True,
) -> AsyncIterator[Storage]:
    if backend == "memory":
        store = MemoryStore(entities)
        # Set by `charter dev`: records outlive the restarts a contract change causes.
        snapshot = os.environ.get("MEMORY_SNAPSHOT")
        if snapshot:
            started = time.perf_counter()
            count = store.restore(Path(snapshot))
            logger.info("memory store: %d record(s) restored in %.0f ms", count, (time.perf_counter() - started) * 1000)
        try:
            yield Storage(repositories=dict(store.repositories), pool=None, outbox=store.events)
        finally:
            if snapshot:
                logger.info("memory store: %d record(s) saved", store.save(Path(snapshot)))
        return
    # The schema is prepared on a connection of its own: it takes an advisory lock, and no pooled
    # connection may hold session state (app/pool.py).
    conn = await asyncpg.connect(database_url)
    try:
        state = await check_database(conn, entities, migrate)
        versioned = await versioned_tables(conn, [meta.table for meta in entities])
    finally:
        await conn.close()
    pool = ConnectionPool(database_url, pool_size, _init_connection, pool_timeout, _SESSION)
    await pool.open()
    try:
        # One pool for the repositories of all entities and for everything else of this process.
        repositories: dict[str, Repository] = {
            meta.name: PostgresRepository(meta, pool, meta.table in versioned, batch_creates) for meta in entities
        }
        yield Storage(
            repositories=repositories, pool=pool, unready=state.unready, unready_error=state.error, held=state.held
        )
    finally:
        await pool.close()
