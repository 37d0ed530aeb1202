"""Applies pending migrations and schema.sql, then exits: `python -m app.migrate`.

The app runs the same step on start when DATABASE_MIGRATE=auto (charter dev, compose), under an
advisory lock. Deployments that roll out several replicas run it once beforehand (the k8s target's
Job), so a schema error stops the rollout instead of every new pod; until it has run, the app
answers 503 naming this command.

Steps that can lose data (a dropped column or table, a narrowed type, NOT NULL filled on existing
rows) are held back, here as on start: the old column or table stays with its data. They are
applied only by `python -m app.migrate --allow-destructive`, in one transaction, and recorded.
"""

import argparse
import asyncio
import logging

import asyncpg

from app.config import settings
from app.storage import DESTRUCTIVE_COMMAND, Prepared, prepare_database

logger = logging.getLogger("app.migrate")


async def migrate(database_url: str, allow_destructive: bool = False) -> Prepared:
    conn = await asyncpg.connect(database_url)
    try:
        return await prepare_database(conn, allow_destructive=allow_destructive)
    finally:
        await conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.migrate", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--allow-destructive",
        action="store_true",
        help="also apply the steps that can lose data (dropped columns and tables, narrowed types)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if settings.DATABASE_BACKEND != "postgres":
        logger.info("DATABASE_BACKEND=%s: nothing to migrate", settings.DATABASE_BACKEND)
        return 0
    prepared = asyncio.run(migrate(settings.DATABASE_URL, args.allow_destructive))
    if prepared.blocked is not None:
        logger.error("%s", prepared.blocked)
        return 1
    for step in prepared.held:
        logger.warning("held back (destructive): %s", step)
    if prepared.held:
        logger.warning(
            "%d destructive step(s) held back: run `%s` to apply them", len(prepared.held), DESTRUCTIVE_COMMAND
        )
    else:
        logger.info("database is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
