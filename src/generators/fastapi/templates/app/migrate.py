"""Applies pending migrations and schema.sql, then exits: `python -m app.migrate`.

The app runs the same step on start when DATABASE_MIGRATE=auto (charter dev, compose), under an
advisory lock. Deployments that roll out several replicas run it once beforehand (the k8s target's
Job), so a schema error stops the rollout instead of every new pod; until it has run, the app
answers 503 naming this command.
"""

import asyncio
import logging

import asyncpg

from app.config import settings
from app.storage import prepare_database

logger = logging.getLogger("app.migrate")


async def migrate(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await prepare_database(conn)
    finally:
        await conn.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if settings.DATABASE_BACKEND != "postgres":
        logger.info("DATABASE_BACKEND=%s: nothing to migrate", settings.DATABASE_BACKEND)
        return
    asyncio.run(migrate(settings.DATABASE_URL))
    logger.info("database is up to date")


if __name__ == "__main__":
    main()
