"""Opens the storage picked by DATABASE_BACKEND and prepares the database on start."""

import logging
import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
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


async def prepare_database(conn: asyncpg.Connection, db_dir: Path = DB_DIR) -> None:
    """Applies pending migrations (each in a transaction, recorded), then schema.sql in full."""
    await conn.execute("SELECT pg_advisory_lock($1)", _PREPARE_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        migrations = db_dir / "migrations"
        if migrations.is_dir():
            applied = {row["version"] for row in await conn.fetch("SELECT version FROM schema_migrations")}
            for path in sorted(migrations.glob("*.sql")):
                if path.stem in applied:
                    continue
                logger.info("applying migration %s", path.name)
                async with conn.transaction():
                    await conn.execute(path.read_text(encoding="utf-8"))
                    await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", path.stem)
        schema = db_dir / "schema.sql"
        if schema.is_file():
            await conn.execute(schema.read_text(encoding="utf-8"))
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _PREPARE_LOCK)


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


async def check_database(conn: asyncpg.Connection, entities: Sequence[EntityMeta], migrate: bool) -> str | None:
    """Applies db/ when `migrate` (under the advisory lock), then names what is still missing."""
    if migrate:
        await prepare_database(conn)
    missing = await missing_tables(conn, [meta.table for meta in entities] + ["events"])
    return unready_message(missing, migrate) if missing else None


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
        unready = await check_database(conn, entities, migrate)
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
        yield Storage(repositories=repositories, pool=pool, unready=unready)
    finally:
        await pool.close()
