"""What the app says about itself: request ids, JSON log lines, Prometheus metrics and traces.

- Every request gets an id: a valid incoming `X-Request-ID`, else one derived from a W3C
  `traceparent`, else a new one. It goes back in the `X-Request-ID` header and into every log line,
  error body and Healer report made while the request runs.
- Log lines are JSON (LOG_FORMAT=text for a person at a terminal), one per request besides what the
  code logs, with the request and trace ids, route template, status, duration and user id. Never a
  header or a body: tokens and passwords cannot leak into them.
- /metrics (METRICS_ENABLED) speaks Prometheus: requests and their latency per route template and
  status, the connection pool, the events outbox, agent runs and Healer reports. METRICS_TOKEN asks
  scrapers for a bearer token; METRICS_PORT serves them on a port of their own instead.
- Traces are OpenTelemetry's, switched on by the standard OTEL_* variables only: without them the
  SDK is never imported, so an app that does not trace pays nothing for it. The server span is
  FastAPI's own (its `telemetry` option): it learns the route template from the router's choice,
  where OpenTelemetry's ASGI instrumentation matches every route again on every request and costs
  several times as much. Queries get asyncpg's instrumentation.

The middleware is pure ASGI, the outermost but for FastAPI's telemetry: one layer, paid on every
request.
"""

import asyncio
import atexit
import contextlib
import hmac
import logging
import os
import random
import re
import sys
import threading
import time
import warnings
from bisect import bisect_left
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, MutableMapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import orjson
from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from opentelemetry import context as otel_context
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Metric,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import config
from app.config import settings
from app.repositories.batches import FIGURES as BATCHES

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.sampling import Sampler

    from app.pool import ConnectionPool

logger = logging.getLogger("app.observability")
# The line per request, on a logger of its own: LOG_LEVEL=WARNING or a filter on the name drops it.
access_logger = logging.getLogger("app.requests")

# An incoming X-Request-ID is kept only if it is short and plain: it is echoed into logs and headers.
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}")
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
_ZERO_TRACE = "0" * 32
# Requests that matched no route share one label: paths a scanner makes up must not make series.
UNMATCHED = "unmatched"
# How often the figures read from the storage are refreshed for the METRICS_PORT listener.
_PROBE_EVERY_S = 5.0


@dataclass
class RequestContext:
    request_id: str
    trace_id: str | None
    user_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# Set for the request's task by the middleware; each request runs in a task of its own, so it is
# never reset: the 500 handler, which Starlette runs outside every middleware, still reads it.
_current: ContextVar[RequestContext | None] = ContextVar("request_context", default=None)


def current() -> RequestContext | None:
    return _current.get()


def request_id() -> str | None:
    ctx = _current.get()
    return ctx.request_id if ctx else None


def trace_id() -> str | None:
    ctx = _current.get()
    return ctx.trace_id if ctx else None


def note_user(user_id: str) -> None:
    """Names the caller in the request's log line (called once the token is checked)."""
    ctx = _current.get()
    if ctx is not None:
        ctx.user_id = user_id


def _ids(headers: list[tuple[bytes, bytes]]) -> tuple[str, str | None]:
    incoming: str | None = None
    upstream: tuple[str, str] | None = None
    for name, value in headers:
        if name == b"x-request-id":
            text = value.decode("latin-1").strip()
            if _VALID_REQUEST_ID.fullmatch(text):
                incoming = text
        elif name == b"traceparent":
            m = _TRACEPARENT.fullmatch(value.decode("latin-1").strip().lower())
            if m and m.group(1) != _ZERO_TRACE:
                upstream = (m.group(1), m.group(2))
    trace = upstream[0] if upstream else None
    if incoming:
        return incoming, trace
    if upstream:
        # The caller's span id tells apart its calls within one trace.
        return f"{upstream[0]}-{upstream[1]}", trace
    # An id, not a secret: the process's PRNG (reseeded in every forked worker) instead of a system
    # call for 16 random bytes, a twentieth of a small request's time.
    return f"{random.getrandbits(128):032x}", trace


# --- logs ----------------------------------------------------------------------------------------


def _json_line(
    created: float, level: str, name: str, message: str, fields: object, exception: str | None = None
) -> str:
    line: dict[str, Any] = {
        "timestamp": datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds"),
        "level": level,
        "logger": name,
        "message": message,
    }
    ctx = _current.get()
    if ctx is not None:
        line["request_id"] = ctx.request_id
        if ctx.trace_id:
            line["trace_id"] = ctx.trace_id
    if isinstance(fields, Mapping):
        line.update(fields)
    if exception is not None:
        line["exception"] = exception
    return orjson.dumps(line, default=str).decode()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the request's ids, then the extras."""

    def format(self, record: logging.LogRecord) -> str:
        exception = self.formatException(record.exc_info) if record.exc_info else None
        fields = getattr(record, "fields", None)
        return _json_line(record.created, record.levelname.lower(), record.name, record.getMessage(), fields, exception)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ctx = _current.get()
        said = [f"request_id={ctx.request_id}"] if ctx is not None else []
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            said.extend(f"{k}={v}" for k, v in fields.items() if k not in ("method", "path", "status"))
        return f"{text} {' '.join(said)}".rstrip()


# The handler setup_logging installed, when it writes JSON lines (see _log_request).
_json_handler: logging.StreamHandler[Any] | None = None


def setup_logging() -> None:
    """Sends the app's and uvicorn's records through one handler on stderr, in LOG_FORMAT."""
    global _json_handler
    handler = _JsonLines(sys.stderr)
    handler.setFormatter(TextFormatter() if settings.LOG_FORMAT == "text" else JsonFormatter())
    _json_handler = None if settings.LOG_FORMAT == "text" else handler
    # What no line here prints, left uncollected (the logging HOWTO's "Optimization"): the caller's
    # file and line, the thread, the process. A record cost a sixth of a small request with them.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.LOG_LEVEL.upper())
    # uvicorn configured its loggers before importing the app: those with a handler of their own
    # write through ours instead.
    uvicorn_logger = logging.getLogger("uvicorn")
    if uvicorn_logger.handlers:
        uvicorn_logger.handlers[:] = [handler]
    # One line per request, the app's own (below, with the route, the ids and the user): uvicorn's
    # access log would be a second, whether or not it was started with --no-access-log.
    logging.getLogger("uvicorn.access").disabled = True
    # Python's warnings (a library's deprecation, PyJWT's InsecureKeyLengthWarning) as log lines too,
    # and those raised while the settings loaded, before this handler was there.
    logging.captureWarnings(True)
    for caught in config.LOAD_WARNINGS:
        warnings.showwarning(caught.message, caught.category, caught.filename, caught.lineno)
    config.LOAD_WARNINGS.clear()


def _as_logging_left_it(handler: logging.Handler) -> bool:
    """Whether a record of `app.requests` would reach `handler` alone, unfiltered: nobody added a
    handler or a filter on its way, or turned the line off (LOG_LEVEL, logging.disable)."""
    if access_logger.filters or handler.filters or handler.level > logging.INFO:
        return False
    if not access_logger.isEnabledFor(logging.INFO):
        return False
    # The handlers logging would call: each logger's, up to the first that does not propagate.
    reached: list[logging.Handler] = []
    node: logging.Logger | None = access_logger
    while node is not None:
        reached.extend(node.handlers)
        node = node.parent if node.propagate else None
    return reached == [handler]


def _log_request(message: str, fields: dict[str, Any]) -> None:
    """The line per request. While logging is as setup_logging left it, the JSON line is written
    to its handler's stream directly: a LogRecord and logging's dispatch would about double what
    the line costs, on every request. Otherwise it is a record like any other.

    On the event loop the lines wait for the loop's next turn and go out in one write: a busy
    worker answers several requests per turn, and a write per line was a system call per request.
    Any other record writes the waiting lines first (_JsonLines), so the stream keeps their order."""
    handler = _json_handler
    if handler is not None and _as_logging_left_it(handler):
        line = _json_line(time.time(), "info", access_logger.name, message, fields)
        if not _waiting:
            try:
                asyncio.get_running_loop().call_soon(_write_waiting)
            except RuntimeError:  # no loop running: written at once
                _waiting.append((line, message, fields))
                _write_waiting()
                return
        _waiting.append((line, message, fields))
        return
    access_logger.info("%s", message, extra={"fields": fields})


# Request lines not yet written: (line, message, fields).
_waiting: list[tuple[str, str, dict[str, Any]]] = []


def _write_waiting() -> None:
    global _waiting
    handler = _json_handler
    if not _waiting or handler is None:
        return
    # Swapped, not copied and cleared: a line added meanwhile lands in one list or the other.
    pending, _waiting = _waiting, []
    with handler.lock or contextlib.nullcontext():
        try:
            handler.stream.write("".join(f"{line}\n" for line, _, _ in pending))
            handler.stream.flush()
            return
        except Exception:  # a closed or broken stream: logging reports it its own way
            pass
    for _, message, fields in pending:
        access_logger.info("%s", message, extra={"fields": fields})


class _JsonLines(logging.StreamHandler[Any]):
    """The JSON handler: writes the request lines still waiting before any other record."""

    def emit(self, record: logging.LogRecord) -> None:
        if _waiting:
            _write_waiting()
        super().emit(record)


# Lines still waiting when the process ends (the loop stopped before its next turn).
atexit.register(_write_waiting)


# --- metrics -------------------------------------------------------------------------------------

# No `_created` series: a time stamp per series that scrapers do not need, and bytes on every scrape.
disable_created_metrics()
# All figures: what the METRICS_PORT listener renders with prometheus_client. /metrics renders the
# requests' figures itself (RequestFigures.exposition), then OTHERS, the rest, with prometheus_client.
REGISTRY = CollectorRegistry(auto_describe=True)
OTHERS = CollectorRegistry(auto_describe=True)


def _label(value: str) -> str:
    """A label value as the text format escapes it (prometheus_client's own rule)."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


class RequestFigures(Collector):
    """Requests answered and their latency, per method, route template and status: the counter
    `http_requests_total` and the histogram `http_request_duration_seconds`.

    Kept as plain numbers that the event loop adds to, turned into Prometheus's families only when
    scraped. prometheus_client's Counter and Histogram take a lock and check their state for every
    value they change, three times a request, more than ten times the cost of adding to a list.
    The loop is the only writer; the METRICS_PORT listener, a thread, only reads, and copies
    the series under the lock that guards adding one.
    """

    BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
    COUNTER = ("http_requests", "Requests answered, by method, route template and status")
    HISTOGRAM = (
        "http_request_duration_seconds",
        "Time from the request's arrival to the end of its response, by method, route template and status",
    )

    def __init__(self) -> None:
        # (method, route, status) -> [sum of durations, then the count of each bucket, the last +Inf]
        self._series: dict[tuple[str, str, int], list[float]] = {}
        self._adding = threading.Lock()
        self._bounds = [floatToGoString(b) for b in self.BUCKETS] + ["+Inf"]
        # (method, route, status) -> its labels as exposition() writes them, escaped once.
        self._labels: dict[tuple[str, str, int], str] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        figures = self._series.get(key)
        if figures is None:
            with self._adding:
                figures = self._series.setdefault(key, [0.0] * (len(self.BUCKETS) + 2))
        figures[0] += seconds
        # The first bound at or above the duration: Prometheus buckets count values <= their bound.
        figures[1 + bisect_left(self.BUCKETS, seconds)] += 1

    def _copy(self) -> list[tuple[tuple[str, str, int], list[float]]]:
        with self._adding:
            return [(key, list(figures)) for key, figures in self._series.items()]

    def collect(self) -> Iterator[Metric]:
        series = self._copy()
        labels = ["method", "route", "status"]
        requests = CounterMetricFamily(*self.COUNTER, labels=labels)
        latency = HistogramMetricFamily(*self.HISTOGRAM, labels=labels)
        for (method, route, status), figures in series:
            values = [method, route, str(status)]
            cumulative = list(accumulate(figures[1:]))
            requests.add_metric(values, cumulative[-1])
            latency.add_metric(values, list(zip(self._bounds, cumulative, strict=True)), figures[0])
        yield requests
        yield latency

    def exposition(self) -> str:
        """The text generate_latest() writes for collect(), byte for byte, written here.

        generate_latest checks and escapes every label of every line again, on every scrape, which
        grows with the series. Here each series' labels are escaped once, and
        a line is its name, those labels and its value.
        """
        series = self._copy()
        counter, histogram = self.COUNTER[0] + "_total", self.HISTOGRAM[0]
        out = [f"# HELP {counter} {self.COUNTER[1]}\n", f"# TYPE {counter} counter\n"]
        rows: list[tuple[str, list[float]]] = []
        for key, figures in series:
            labels = self._labels.get(key)
            if labels is None:
                method, route, status = key
                labels = self._labels[key] = f'method="{_label(method)}",route="{_label(route)}",status="{status}"'
            cumulative = list(accumulate(figures[1:]))
            rows.append((labels, [figures[0], *cumulative]))
            out.append(f"{counter}{{{labels}}} {floatToGoString(cumulative[-1])}\n")
        out += [f"# HELP {histogram} {self.HISTOGRAM[1]}\n", f"# TYPE {histogram} histogram\n"]
        bucket = histogram + '_bucket{le="'
        for labels, (total, *cumulative) in rows:
            out.extend(
                f'{bucket}{bound}",{labels}}} {floatToGoString(n)}\n'
                for bound, n in zip(self._bounds, cumulative, strict=True)
            )
            out.append(f"{histogram}_count{{{labels}}} {floatToGoString(cumulative[-1])}\n")
            out.append(f"{histogram}_sum{{{labels}}} {floatToGoString(total)}\n")
        return "".join(out)


class Registered(Collector):
    """The figures of another registry, as one collector of a registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()


REQUEST_FIGURES = RequestFigures()
REGISTRY.register(REQUEST_FIGURES)
REGISTRY.register(Registered(OTHERS))
POOL_SIZE = Gauge("db_pool_size", "Connections of the database pool", registry=OTHERS)
POOL_IN_USE = Gauge("db_pool_in_use", "Connections handed out now", registry=OTHERS)
POOL_WAITING = Gauge("db_pool_waiting", "Requests waiting for a connection now", registry=OTHERS)


class StorageCounts(Collector):
    """Counters the pool and the batches keep themselves, read when scraped: `*_total` counters, as
    Prometheus's rate() reads them (a gauge holding a running count is one promtool refuses)."""

    COUNTERS = (
        ("db_pool_waits", "Times a request had to wait for a connection"),
        ("db_batched_inserts", "Multi-row INSERTs that wrote creates arriving together"),
        ("db_batched_creates", "Creates written by a multi-row INSERT"),
    )

    def __init__(self) -> None:
        # Read by the probe (pool.stats() and BATCHES belong to the event loop), here only copied.
        # No pool (the memory backend) waits for nothing and writes no batches: zeros.
        self.values: tuple[float, float, float] = (0, 0, 0)

    def collect(self) -> Iterator[Metric]:
        for (name, documentation), value in zip(self.COUNTERS, self.values, strict=True):
            yield CounterMetricFamily(name, documentation, value=value)


STORAGE_COUNTS = StorageCounts()
OTHERS.register(STORAGE_COUNTS)
# Namespaced, with their unit last (Prometheus's naming): undelivered events of the outbox; agent
# runs recorded, a gauge since a run leaves the `running` outcome for another.
EVENTS = Gauge("outbox_events", "Events of the outbox not yet delivered, by state", ["state"], registry=OTHERS)
AGENT_RUNS = Gauge("llm_agent_runs", "Agent runs recorded, by agent and outcome", ["agent", "outcome"], registry=OTHERS)
HEALER_REPORTS = Counter(
    "healer_reports",
    "Error reports to the Healer, by result (sent, refused, failed: will be retried, dropped)",
    ["result"],
    registry=OTHERS,
)

# What /metrics reads at scrape time (the open storage, agent runs), registered at start.
Probe = Callable[[], Awaitable[None]]
_probes: list[Probe] = []


def watch(probe: Probe) -> None:
    _probes.append(probe)


def unwatch() -> None:
    _probes.clear()


# Events not delivered yet: the partial index of the dispatcher's claim serves this query, however
# long the table of delivered events grows.
_EVENT_COUNTS = """
SELECT count(*) FILTER (WHERE parked_at IS NULL) AS pending,
       count(*) FILTER (WHERE parked_at IS NULL AND last_error IS NOT NULL) AS retrying,
       count(*) FILTER (WHERE parked_at IS NOT NULL) AS parked
FROM events WHERE dispatched_at IS NULL
"""


def watch_storage(pool: "ConnectionPool | None", outbox: list[dict[str, Any]] | None) -> None:
    """The pool's figures and the outbox's counts, for /metrics."""

    async def probe() -> None:
        counts: Mapping[str, int]
        if pool is not None:
            size, in_use, waiting, waits = pool.stats()
            POOL_SIZE.set(size)
            POOL_IN_USE.set(in_use)
            POOL_WAITING.set(waiting)
            STORAGE_COUNTS.values = (waits, BATCHES.statements, BATCHES.rows)
            row = await pool.fetchrow(_EVENT_COUNTS)
            counts = dict(row) if row is not None else {}
        else:
            undelivered = [e for e in outbox or () if e.get("dispatched_at") is None]
            live = [e for e in undelivered if e.get("parked_at") is None]
            counts = {
                "pending": len(live),
                "retrying": sum(1 for e in live if e.get("last_error") is not None),
                "parked": len(undelivered) - len(live),
            }
        for state in ("pending", "retrying", "parked"):
            EVENTS.labels(state).set(counts.get(state, 0))

    watch(probe)


async def count_agent_runs(outcomes: Callable[[], Awaitable[dict[tuple[str, str], int]]]) -> None:
    for (agent, outcome), n in (await outcomes()).items():
        AGENT_RUNS.labels(agent, outcome).set(n)


async def render_metrics() -> bytes:
    for probe in _probes:
        try:
            await probe()
        except Exception:  # a broken probe must not hide the other figures
            logger.exception("a metrics probe failed")
    return REQUEST_FIGURES.exposition().encode() + generate_latest(OTHERS)


def _authorized(request: Request) -> bool:
    if not settings.METRICS_TOKEN:
        return True
    given = request.headers.get("authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {settings.METRICS_TOKEN}".encode())


async def metrics(request: Request) -> Response:
    if not _authorized(request):
        # Rendered by app/errors.py's handler, as every refusal is: this module, which errors.py
        # imports for request ids, imports nothing of errors.py (no import circle).
        raise HTTPException(401, "/metrics needs METRICS_TOKEN as a bearer token", {"WWW-Authenticate": "Bearer"})
    return Response(await render_metrics(), media_type=CONTENT_TYPE_LATEST)


def _route_of(scope: Scope) -> str:
    route = scope.get("route")
    if route is not None:
        return str(getattr(route, "path", UNMATCHED))
    # A request the router never saw (refused at the edge: not ready, too large, not JSON) carries
    # no route: match it here, which only such requests pay for. app/edge.py hands the route of a
    # request it copied back to this scope.
    app = scope.get("app")
    if app is None:
        return UNMATCHED
    # As sent, then without its trailing slash: a collection is served at `/tickets/`, an item at
    # `/tickets/{record_id}`.
    path = scope["path"]
    for probe_path in dict.fromkeys((path, path.rstrip("/") or "/")):
        probe = {**scope, "path": probe_path}
        for candidate in app.router.routes:
            match, _ = candidate.matches(probe)
            if match == Match.FULL:
                return str(getattr(candidate, "path", UNMATCHED))
    return UNMATCHED


# --- the middleware ------------------------------------------------------------------------------


class ObservabilityMiddleware:
    def __init__(self, app: ASGIApp, tracing: bool, metrics: bool, access_log: bool) -> None:
        self.app = app
        self.tracing = tracing
        self.metrics = metrics
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        rid, trace = _ids(scope["headers"])
        unsampled = self.tracing and scope.get(_UNSAMPLED, False)
        if self.tracing and not unsampled:
            trace = _span_trace_id(rid) or trace
        ctx = RequestContext(rid, trace)
        _current.set(ctx)
        header = (b"x-request-id", rid.encode())
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            if unsampled:
                # No span records the request: its queries make none either (the flag every
                # instrumentation reads, set as its own suppress_instrumentation() does).
                token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
                try:
                    await self.app(scope, receive, send_with_id)
                finally:
                    otel_context.detach(token)
            else:
                await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            route = _route_of(scope)
            method = scope["method"]
            if self.metrics:
                REQUEST_FIGURES.observe(method, route, status, elapsed)
            if self.access_log:
                fields = {
                    "method": method,
                    "route": route,
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 3),
                    "user_id": ctx.user_id,
                }
                _log_request(f"{method} {scope['path']} {status}", fields)


# --- traces --------------------------------------------------------------------------------------


def tracing_wanted(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the standard OTEL_* variables ask for traces."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return exporter != "none"
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def _span_trace_id(rid: str) -> str | None:
    from opentelemetry import trace

    span = trace.get_current_span()
    context = span.get_span_context()
    if not context.is_valid:
        return None
    span.set_attribute("http.request_id", rid)
    return format(context.trace_id, "032x")


# Probes and scrapes: a span each would bury the requests they answer for.
_UNTRACED = frozenset({"/health", "/metrics"})
# Set on the scope of a request the sampler leaves out (see _HeadSampling).
_UNSAMPLED = "charter.unsampled"


class _HeadSampling:
    """Asks the SDK's own sampler (OTEL_TRACES_SAMPLER), before FastAPI's telemetry starts a span,
    whether the request will be recorded, so that a request left out costs nothing: FastAPI skips
    it, and its queries make no spans either. Starting a span only to drop it costs about a quarter
    of a small request, which a sampled production app would pay on every request it does not keep.

    The SDK asks the same sampler again when the span starts. For a request with no caller's trace
    the trace id the answer was given for is handed to the SDK (DecidedIds), so both questions are
    about the same trace and get the same answer from every standard sampler."""

    def __init__(self, sampler: "Sampler", random_trace_id: Callable[[], int]) -> None:
        from opentelemetry import propagate, trace
        from opentelemetry.trace import SpanKind

        self._sampler = sampler
        self._random_trace_id = random_trace_id
        self._extract = propagate.extract
        self._span_of = trace.get_current_span
        self._kind = SpanKind.SERVER
        self._root_keeps = _root_decision(sampler)

    def keeps(self, headers: list[tuple[bytes, bytes]]) -> bool:
        carrier: dict[str, str] = {}
        for name, value in headers:
            if name == b"traceparent" or name == b"tracestate":
                carrier[name.decode()] = value.decode("latin-1")
        parent = None
        trace_id = None
        if "traceparent" in carrier:
            parent = self._extract(carrier)
            context = self._span_of(parent).get_span_context()
            trace_id = context.trace_id if context.is_valid else None
        if trace_id is None:
            trace_id = self._random_trace_id()
            if self._root_keeps is not None:
                kept = self._root_keeps(trace_id)
            else:
                kept = self._sampler.should_sample(None, trace_id, "HTTP", self._kind).decision.is_sampled()
            if kept:
                _decided_trace_id.set(trace_id)
            return kept
        return self._sampler.should_sample(parent, trace_id, "HTTP", self._kind).decision.is_sampled()


def _root_decision(sampler: "Sampler") -> Callable[[int], bool] | None:
    """What the standard samplers (OTEL_TRACES_SAMPLER: always_on, always_off, traceidratio and their
    parentbased_ forms) decide for a trace with no caller, as one comparison: the SDK's answer
    builds a result, a trace state and attributes each time, on every request.
    None for any other sampler, which is asked itself."""
    from opentelemetry.sdk.trace import sampling

    root = getattr(sampler, "_root", None) if isinstance(sampler, sampling.ParentBased) else sampler
    if isinstance(root, sampling.TraceIdRatioBased):
        bound, limit = root.bound, root.TRACE_ID_LIMIT
        return lambda trace_id: trace_id & limit < bound
    if root is sampling.ALWAYS_ON:
        return lambda trace_id: True
    if root is sampling.ALWAYS_OFF:
        return lambda trace_id: False
    return None


_decided_trace_id: ContextVar[int | None] = ContextVar("decided_trace_id", default=None)
_head: _HeadSampling | None = None


def _untraced(scope: MutableMapping[str, Any]) -> bool:
    return scope.get("path") in _UNTRACED


class App(FastAPI):
    """FastAPI, but a request the trace sampler leaves out never enters FastAPI's telemetry: marked
    as one it has seen already (its own scope key), it goes straight to the app."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _head is not None and scope["type"] == "http" and not _untraced(scope) and not _head.keeps(scope["headers"]):
            scope["fastapi.telemetry"] = None
            scope[_UNSAMPLED] = True
        await super().__call__(scope, receive, send)


def telemetry(env: Mapping[str, str] = os.environ) -> TelemetryConfig:
    """FastAPI's telemetry option: a server span per request when traces are wanted, and nothing
    else. Its metrics are Prometheus's here, its log records the JSON lines above, and its spans
    for dependencies, endpoint and serialization would triple what every traced request costs."""
    return {
        "tracing": tracing_wanted(env),
        "metrics": False,
        "logs": False,
        "operation_spans": False,
        "auto_configure": False,
        "exclude": _untraced,
    }


def setup_tracing(service_name: str) -> None:
    """The SDK with the exporter OTEL_TRACES_EXPORTER names (otlp over HTTP by default, or console),
    as the global provider FastAPI's server spans use, and asyncpg's query spans. Everything else
    (endpoint, headers, sampler, resource attributes) is read by the SDK from the OTEL_* variables."""
    from opentelemetry import trace
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    global _head

    class DecidedIds(RandomIdGenerator):
        """Random ids, but for the trace whose sampling _HeadSampling has just decided."""

        def generate_trace_id(self) -> int:
            decided = _decided_trace_id.get()
            if decided is None:
                return super().generate_trace_id()
            _decided_trace_id.set(None)
            return decided

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(attributes), id_generator=DecidedIds())
    _head = _HeadSampling(provider.sampler, RandomIdGenerator().generate_trace_id)
    named = os.environ.get("OTEL_TRACES_EXPORTER", "").lower().split(",")
    exporters = [e.strip() for e in named if e.strip()] or ["otlp"]
    for name in exporters:
        exporter: SpanExporter
        if name == "console":
            exporter = ConsoleSpanExporter()
        elif name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        else:
            config.refuse(f"invalid settings: OTEL_TRACES_EXPORTER: {name!r} is not otlp, console or none")
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    AsyncPGInstrumentor().instrument()
    logger.info("tracing on: exporting spans with %s", ", ".join(exporters))


def shutdown_tracing() -> None:
    """Sends the spans still buffered before the process ends."""
    if "opentelemetry.sdk.trace" not in sys.modules:
        return
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.shutdown()


# --- wiring --------------------------------------------------------------------------------------


def install(app: FastAPI, service_name: str) -> None:
    """Logs, the middleware, /metrics (here or on METRICS_PORT) and, if asked, tracing."""
    setup_logging()
    tracing = tracing_wanted()
    app.add_middleware(
        ObservabilityMiddleware,
        tracing=tracing,
        metrics=settings.METRICS_ENABLED,
        access_log=settings.LOG_REQUESTS,
    )
    if settings.METRICS_ENABLED and settings.METRICS_PORT is None:
        app.add_api_route("/metrics", metrics, methods=["GET"], include_in_schema=False)
    if tracing:
        setup_tracing(service_name)


@asynccontextmanager
async def running(pool: "ConnectionPool | None", outbox: list[dict[str, Any]] | None) -> AsyncIterator[None]:
    """The probes of the open storage, and the METRICS_PORT listener, for the app's lifetime."""
    watch_storage(pool, outbox)
    refresher: asyncio.Task[None] | None = None
    if settings.METRICS_ENABLED and settings.METRICS_PORT is not None:
        from prometheus_client import start_http_server

        try:
            start_http_server(settings.METRICS_PORT, addr=settings.METRICS_HOST, registry=REGISTRY)
            logger.info("metrics on port %d", settings.METRICS_PORT)
        except OSError as exc:
            # Several uvicorn workers: the first one serves the port (and only its own figures).
            logger.warning("metrics port %d not served by this process: %s", settings.METRICS_PORT, exc)
        # The listener's thread cannot run the probes, which query the database on this loop.
        refresher = asyncio.create_task(_refresh_probes(), name="metrics-probes")
    try:
        yield
    finally:
        if refresher is not None:
            refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await refresher
        unwatch()
        shutdown_tracing()


async def _refresh_probes() -> None:
    while True:
        await render_metrics()
        await asyncio.sleep(_PROBE_EVERY_S)
