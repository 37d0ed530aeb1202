"""The events dispatcher and the agents in a process of their own (PostgreSQL backend).

Started and supervised by the application process (app/agents.py `worker_process`), one per
application process: the agents' prompts, model calls and updates never take CPU from requests.
It stops on SIGTERM, and when its application process is gone (killed, even with SIGKILL) it
follows: whatever it had claimed comes back to the other replicas when the claims' lease ends.
"""

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys

from app.agent_specs import SUBSCRIPTIONS
from app.agents import PostgresRunStore, dispatching
from app.config import refuse, settings
from app.dispatcher import DispatchSettings
from app.domain import ENTITIES
from app.llm import NoProvider, select_provider
from app.storage import open_storage

logger = logging.getLogger("app.worker")

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux delivers SIGTERM to this process when its parent dies; elsewhere the loop below notices."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


async def main() -> None:
    parent = os.getppid()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    provider = select_provider()
    if isinstance(provider, NoProvider):
        logger.warning("events dispatcher not started: %s", provider.reason)
        return
    pool_size = DispatchSettings().DISPATCH_POOL_SIZE
    async with open_storage("postgres", settings.DATABASE_URL, pool_size, ENTITIES) as storage:
        if storage.pool is None:
            refuse("the events worker needs the postgres backend")
        if storage.unready:
            refuse(f"events dispatcher not started: {storage.unready}")
        store = PostgresRunStore(storage.pool)
        async with dispatching(provider, SUBSCRIPTIONS, storage.repositories, storage.pool, None, store):
            while not stop.is_set() and os.getppid() == parent:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)


if __name__ == "__main__":
    die_with_parent()
    asyncio.run(main())
