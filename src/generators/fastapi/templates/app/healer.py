"""Reports unhandled exceptions to the Healer without ever delaying or breaking the response.

A report is a background task with a short timeout: the client has its 500 already. A report the
Healer refuses (4xx) is logged once with its reason and dropped; one it could not take (down,
5xx) waits in a bounded queue that one background task retries with a growing pause, oldest
reports dropped first when the queue is full. A report keeps its id when sent again, so one the
Healer took before its answer timed out is not counted twice. With `SVC_HEALER_TOKEN` set,
reports carry it as a bearer token.

A report names the request's path and method, not a contract: the Healer knows the contracts
and decides which one the failure is about.
"""

import asyncio
import logging
import traceback
import uuid
from collections import deque
from collections.abc import Coroutine
from typing import Any

import httpx
from fastapi import Request

from app import observability
from app.config import settings

logger = logging.getLogger("app.healer")

_TIMEOUT = httpx.Timeout(2.0)
# Reports kept while the Healer is unreachable; beyond it the oldest are dropped.
MAX_QUEUED = 100
_RETRY_FIRST_S = 1.0
_RETRY_MAX_S = 30.0
# Running tasks, kept referenced so the event loop does not collect them mid-flight.
_pending: set[asyncio.Task[None]] = set()
_queue: deque[dict[str, Any]] = deque(maxlen=MAX_QUEUED)
_retrying: list[asyncio.Task[None]] = []


def report(request: Request, exc: BaseException, status_code: int) -> None:
    if not settings.SVC_HEALER_URL:
        return
    stacktrace = "".join(traceback.format_exception(exc))
    payload: dict[str, Any] = {
        # Kept when the report is sent again after a lost answer: the Healer counts it once.
        "report_id": uuid.uuid4().hex,
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
    # The request's ids tie the ticket to this request's log lines and trace (app/observability.py).
    ctx = observability.current()
    if ctx is not None:
        payload["context"]["request_id"] = ctx.request_id
        if ctx.trace_id:
            payload["context"]["trace_id"] = ctx.trace_id
    _spawn(_deliver(payload))


def _spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
    _pending.add(task)
    task.add_done_callback(_pending.discard)
    return task


def _url() -> str:
    return (settings.SVC_HEALER_URL or "").rstrip("/") + "/healer/ingest"


async def _send(payload: dict[str, Any]) -> str | None:
    """None when the Healer took the report (or refused it for good); otherwise why to retry."""
    headers = {"authorization": f"Bearer {settings.SVC_HEALER_TOKEN}"} if settings.SVC_HEALER_TOKEN else {}
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            response = await client.post(_url(), json=payload, headers=headers)
    except Exception as exc:  # a report must never raise
        return f"{type(exc).__name__}: {exc}"
    if response.status_code < 400:
        observability.HEALER_REPORTS.labels("sent").inc()
        return None
    if response.status_code >= 500 or response.status_code in (408, 429):
        return f"HTTP {response.status_code}"
    observability.HEALER_REPORTS.labels("refused").inc()
    hint = " (is SVC_HEALER_TOKEN the Healer's token?)" if response.status_code in (401, 403) else ""
    logger.warning(
        "the Healer at %s refused an error report with HTTP %s%s: %s",
        _url(),
        response.status_code,
        hint,
        response.text[:300],
    )
    return None


async def _deliver(payload: dict[str, Any]) -> None:
    # Behind queued reports: join the queue, so they keep their order.
    if _queue:
        if len(_queue) == MAX_QUEUED:
            observability.HEALER_REPORTS.labels("dropped").inc()
        _queue.append(payload)
        return
    why = await _send(payload)
    if why is None:
        return
    logger.warning("could not report an error to the Healer at %s: %s; it will be retried", _url(), why)
    observability.HEALER_REPORTS.labels("failed").inc()
    if len(_queue) == MAX_QUEUED:
        observability.HEALER_REPORTS.labels("dropped").inc()
    _queue.append(payload)
    if not _retrying:
        _retrying.append(_spawn(_retry()))


async def _retry() -> None:
    pause = _RETRY_FIRST_S
    try:
        while _queue:
            await asyncio.sleep(pause)
            while _queue:
                if await _send(_queue[0]) is not None:
                    observability.HEALER_REPORTS.labels("failed").inc()
                    pause = min(pause * 2, _RETRY_MAX_S)
                    break
                _queue.popleft()
                pause = _RETRY_FIRST_S
    finally:
        _retrying.clear()
