"""Reports unhandled exceptions to the Healer without ever delaying or breaking the response.

The report is a background task with a short timeout: when the Healer is slow or down, the
client has its 500 already and the failure to report is only logged.
"""

import asyncio
import logging
import traceback
from typing import Any

import httpx
from fastapi import Request

from app.config import settings
from app.domain import ROUTE_CONTRACTS

logger = logging.getLogger("app.healer")

_TIMEOUT = httpx.Timeout(2.0)
# Running reports, kept referenced so the event loop does not collect them mid-flight.
_pending: set[asyncio.Task[None]] = set()


def contracts_for_path(path: str) -> tuple[str, str] | None:
    """The entity and Route contracts that serve `path`, by longest matching base path."""
    best: tuple[int, str, str] | None = None
    for base_path, entity_fqn, route_fqn in ROUTE_CONTRACTS:
        if (path == base_path or path.startswith(base_path.rstrip("/") + "/")) and (
            best is None or len(base_path) > best[0]
        ):
            best = (len(base_path), entity_fqn, route_fqn)
    return (best[1], best[2]) if best else None


def report(request: Request, exc: BaseException, status_code: int) -> None:
    if not settings.SVC_HEALER_URL:
        return
    stacktrace = "".join(traceback.format_exception(exc))
    payload: dict[str, Any] = {
        "source": "runtime",
        "error": f"{type(exc).__name__}: {exc}",
        "stacktrace": stacktrace,
        "context": {
            "path": request.url.path,
            "request_path": request.url.path,
            "method": request.method,
            "status_code": status_code,
            "stacktrace": stacktrace,
        },
    }
    contracts = contracts_for_path(request.url.path)
    if contracts is not None:
        payload["contract_fqn"] = contracts[0]
        payload["context"]["route_fqn"] = contracts[1]
    url = settings.SVC_HEALER_URL.rstrip("/") + "/healer/ingest"
    headers = {"Authorization": f"Bearer {settings.SVC_HEALER_TOKEN}"} if settings.SVC_HEALER_TOKEN else {}
    task = asyncio.get_running_loop().create_task(_post(url, payload, headers))
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def _post(url: str, payload: dict[str, Any], headers: dict[str, str]) -> None:
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            response = await client.post(url, json=payload, headers=headers)
            response.raise_for_status()
    except Exception as exc:  # a report must never raise
        logger.warning("could not report an error to the Healer at %s: %s", url, exc)
