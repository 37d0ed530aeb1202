"""The agent runtime: Agent contracts run by the events dispatcher, every run recorded.

An agent runs for one record when the dispatcher delivers an event it is subscribed to (its
`trigger`, the entity's `ai_integration`, a route's `invoke` side effect): it asks the model about
the record's `input` fields and expects `{"updates": {...}, "confidence": 0..1, "reason": "..."}`.
At or above the agent's threshold the updates of the fields in `output.updates` are applied
through the entity's update path (types, enums, route rules and workflow guards all apply; any
other field in the reply is ignored and recorded as such); below it, or on any error or timeout,
the fallback runs (leave the record alone, or set fixed values). Agents never run on the request
path, and a change an agent makes emits no event (a `state` change emits its workflow move's
events, as PUT .../state does), so agents do not set each other off in a loop.

Each (agent, event) has one row in `agent_runs`: a redelivered event finds its run and does not
apply the agent twice. A run left `running` by a replica that died is taken over once the
dispatcher's lease has passed (no handler outlives it).
"""

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import sys
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import orjson
from pydantic import BaseModel, ValidationError

from app import events, observability
from app.dispatcher import DispatchSettings, MemoryDispatcher, PostgresDispatcher
from app.errors import ApiError
from app.events import Event
from app.llm import LlmClient, LlmError, NoProvider, Provider, parse_json_object, select_provider
from app.pool import ConnectionPool
from app.records import check_changes, fill
from app.repositories.base import Change, EntityMeta, Record, Repository
from app.rules import Rule, enforce
from app.workflow import Workflow

logger = logging.getLogger("app.agents")


@dataclass(frozen=True, slots=True)
class UpdatePath:
    """How a record of one entity is changed outside a request: what PATCH checks, and the moves."""

    meta: EntityMeta
    model: type[BaseModel]
    rules: tuple[Rule, ...] = ()
    fill: Mapping[str, str] = field(default_factory=dict)
    workflow: Workflow | None = None


@dataclass(frozen=True, slots=True)
class AgentSpec:
    fqn: str
    name: str
    description: str
    entity: str
    fields: tuple[str, ...]
    updates: tuple[str, ...]
    threshold: float
    approach: str
    constraints: tuple[str, ...]
    # What each updatable field may hold, for the prompt (`one of: low, medium, high`).
    hints: Mapping[str, str]
    # None: leave the record unchanged; else the values the fallback sets.
    fallback: Mapping[str, Any] | None
    path: UpdatePath


class AgentRun(BaseModel):
    """One run of an agent for a record (GET {base_path}/{id}/agent-runs)."""

    id: UUID
    agent: str
    event: str
    event_id: UUID
    decision: str
    confidence: float | None
    changes: dict[str, Any]
    ignored: list[str]
    reason: str | None
    error: str | None
    reply: str | None
    prompt_hash: str | None
    duration_ms: float | None
    started_at: datetime
    finished_at: datetime | None


class AgentRunList(BaseModel):
    items: list[AgentRun]


class RunBusyError(Exception):
    """Another replica is running this agent for this event right now; the dispatcher retries."""


@dataclass(slots=True)
class Outcome:
    decision: str
    prompt_hash: str | None = None
    reply: str | None = None
    confidence: float | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    reason: str | None = None
    error: str | None = None
    duration_ms: float = 0.0


class RunStore(ABC):
    @abstractmethod
    async def begin(self, agent: str, event: Event, stale_after: float) -> UUID | None:
        """Claims the run of `agent` for `event`: its id, or None when it already finished.
        Raises RunBusyError while another replica's claim is fresh."""

    @abstractmethod
    async def finish(self, run_id: UUID, outcome: Outcome) -> None: ...

    @abstractmethod
    async def of_record(self, entity: str, record_id: UUID) -> list[dict[str, Any]]:
        """The runs of one record, newest first."""

    @abstractmethod
    async def outcomes(self) -> dict[tuple[str, str], int]:
        """How many runs each agent has by decision (`running` included), for /metrics."""


class MemoryRunStore(RunStore):
    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], dict[str, Any]] = {}

    async def begin(self, agent: str, event: Event, stale_after: float) -> UUID | None:
        now = datetime.now(UTC)
        run = self._runs.get((agent, event.id))
        if run is not None:
            if run["decision"] != "running":
                return None
            if run["started_at"] > now - timedelta(seconds=stale_after):
                raise RunBusyError(f"{agent} is already running for event {event.id}")
            run["started_at"] = now
            return UUID(str(run["id"]))
        run_id = uuid4()
        self._runs[(agent, event.id)] = {
            "id": run_id,
            "agent": agent,
            "event": event.name,
            "event_id": UUID(event.id),
            "entity": event.entity,
            "record_id": event.record_id,
            "decision": "running",
            "confidence": None,
            "changes": {},
            "ignored": [],
            "reason": None,
            "error": None,
            "reply": None,
            "prompt_hash": None,
            "duration_ms": None,
            "started_at": now,
            "finished_at": None,
        }
        return run_id

    async def finish(self, run_id: UUID, outcome: Outcome) -> None:
        for run in self._runs.values():
            if run["id"] == run_id:
                run.update(_outcome_values(outcome), finished_at=datetime.now(UTC))

    async def of_record(self, entity: str, record_id: UUID) -> list[dict[str, Any]]:
        runs = [dict(r) for r in self._runs.values() if r["entity"] == entity and str(r["record_id"]) == str(record_id)]
        return sorted(runs, key=lambda r: r["started_at"], reverse=True)

    async def outcomes(self) -> dict[tuple[str, str], int]:
        return dict(Counter((r["agent"], r["decision"]) for r in self._runs.values()))


def _outcome_values(outcome: Outcome) -> dict[str, Any]:
    return {
        "decision": outcome.decision,
        "prompt_hash": outcome.prompt_hash,
        "reply": outcome.reply,
        "confidence": outcome.confidence,
        "changes": outcome.changes,
        "ignored": outcome.ignored,
        "reason": outcome.reason,
        "error": outcome.error,
        "duration_ms": outcome.duration_ms,
    }


_RUN_COLUMNS = (
    "id, agent, event, event_id, decision, confidence, changes, ignored, reason, error, reply, "
    "prompt_hash, duration_ms, started_at, finished_at"
)

# Inserts the run, or takes over one whose replica died (still `running` past the lease).
_BEGIN = """
INSERT INTO agent_runs (id, agent, event_id, event, entity, record_id)
VALUES (gen_random_uuid(), $1, $2, $3, $4, $5)
ON CONFLICT (agent, event_id) DO UPDATE SET started_at = now()
WHERE agent_runs.decision = 'running' AND agent_runs.started_at < now() - make_interval(secs => $6)
RETURNING id
"""

_FINISH = """
UPDATE agent_runs SET decision = $2, prompt_hash = $3, reply = $4, confidence = $5, changes = $6,
    ignored = $7, reason = $8, error = $9, duration_ms = $10, finished_at = now()
WHERE id = $1
"""


class PostgresRunStore(RunStore):
    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    async def begin(self, agent: str, event: Event, stale_after: float) -> UUID | None:
        args = (agent, event.id, event.name, event.entity, event.record_id, stale_after)
        run_id = await self._pool.fetchval(_BEGIN, *args)
        if run_id is not None:
            return UUID(str(run_id))
        decision = await self._pool.fetchval(
            "SELECT decision FROM agent_runs WHERE agent = $1 AND event_id = $2", agent, event.id
        )
        if decision == "running":
            raise RunBusyError(f"{agent} is already running for event {event.id}")
        return None

    async def finish(self, run_id: UUID, outcome: Outcome) -> None:
        v = _outcome_values(outcome)
        await self._pool.execute(
            _FINISH,
            run_id,
            v["decision"],
            v["prompt_hash"],
            v["reply"],
            v["confidence"],
            v["changes"],
            v["ignored"],
            v["reason"],
            v["error"],
            v["duration_ms"],
        )

    async def of_record(self, entity: str, record_id: UUID) -> list[dict[str, Any]]:
        rows = await self._pool.fetch(
            f"SELECT {_RUN_COLUMNS} FROM agent_runs WHERE entity = $1 AND record_id = $2 "
            "ORDER BY started_at DESC, id LIMIT 200",
            entity,
            record_id,
        )
        return [dict(row) for row in rows]

    async def outcomes(self) -> dict[tuple[str, str], int]:
        rows = await self._pool.fetch("SELECT agent, decision, count(*) AS n FROM agent_runs GROUP BY agent, decision")
        return {(row["agent"], row["decision"]): row["n"] for row in rows}


def build_prompt(agent: AgentSpec, event: Event, record: Mapping[str, Any]) -> tuple[str, str]:
    """The system and user messages of one run."""
    lines = [
        f"You are {agent.name}, an agent of a business application. {agent.description}".strip(),
        "You look at one record and propose new values for some of its fields.",
    ]
    if agent.approach:
        lines.append(f"Approach: {agent.approach}")
    if agent.constraints:
        lines.append("Constraints you must follow:")
        lines.extend(f"- {c}" for c in agent.constraints)
    lines.append("Fields you may change (leave out any you are unsure of):")
    lines.extend(f"- {name}: {agent.hints.get(name, 'a value')}" for name in agent.updates)
    lines.append(
        'Reply with one JSON object and nothing else: {"updates": {"<field>": <value>}, '
        '"confidence": <number from 0 to 1>, "reason": "<one sentence>"}'
    )
    shown = {name: record.get(name) for name in agent.fields}
    current = {name: record.get(name) for name in agent.updates}
    user = "\n".join(
        [
            f"Event: {event.name} on {agent.entity} {record.get('id')}",
            f"Record: {orjson.dumps(shown, default=str).decode()}",
            f"Current values of the fields you may change: {orjson.dumps(current, default=str).decode()}",
        ]
    )
    return "\n".join(lines), user


class AgentRuntime:
    def __init__(
        self,
        client: LlmClient,
        runs: RunStore,
        repositories: Mapping[str, Repository],
        stale_after: float,
    ) -> None:
        self._client = client
        self._runs = runs
        self._repositories = repositories
        self._stale_after = stale_after

    def handler(self, agent: AgentSpec) -> events.Handler:
        async def run(event: Event) -> None:
            await self.run(agent, event)

        return run

    async def run(self, agent: AgentSpec, event: Event) -> None:
        run_id = await self._runs.begin(agent.name, event, self._stale_after)
        if run_id is None:
            return  # a redelivery: this agent already ran for this event
        started = time.perf_counter()
        outcome = await self._decide(agent, event)
        outcome.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        await self._runs.finish(run_id, outcome)
        logger.info(
            "%s on %s %s: %s (confidence %s)",
            agent.name,
            event.name,
            event.record_id,
            outcome.decision,
            outcome.confidence,
        )

    async def _decide(self, agent: AgentSpec, event: Event) -> Outcome:
        repo = self._repositories[agent.entity]
        record = await repo.get(event.record_id) if event.record_id is not None else None
        if record is None:
            return Outcome("skipped", error=f"the {agent.entity} no longer exists")
        system, user = build_prompt(agent, event, record)
        outcome = Outcome("fallback", prompt_hash=hashlib.sha256(f"{system}\n\n{user}".encode()).hexdigest())
        try:
            outcome.reply = await self._client.complete(system, user)
        except LlmError as exc:
            outcome.error = str(exc)
            return await self._fallback(agent, repo, record, outcome)
        reply = parse_json_object(outcome.reply)
        updates = reply.get("updates") if reply is not None else None
        confidence = _confidence(reply.get("confidence")) if reply is not None else None
        if reply is None or not isinstance(updates, dict) or confidence is None:
            outcome.error = 'the reply is not {"updates": {...}, "confidence": 0..1, "reason": "..."}'
            return await self._fallback(agent, repo, record, outcome)
        outcome.confidence = confidence
        reason = reply.get("reason")
        outcome.reason = str(reason) if reason is not None else None
        outcome.ignored = sorted(name for name in updates if name not in agent.updates)
        if outcome.confidence < agent.threshold:
            return await self._fallback(agent, repo, record, outcome)
        changes = {name: value for name, value in updates.items() if name in agent.updates}
        try:
            outcome.changes = await apply_changes(agent, repo, record, changes)
        except ApiError as exc:
            outcome.error = f"the updates were refused: {exc.message}"
            return await self._fallback(agent, repo, record, outcome)
        outcome.decision = "applied"
        return outcome

    async def _fallback(self, agent: AgentSpec, repo: Repository, record: Record, outcome: Outcome) -> Outcome:
        outcome.decision = "fallback"
        if agent.fallback:
            try:
                outcome.changes = await apply_changes(agent, repo, record, dict(agent.fallback))
            except ApiError as exc:
                outcome.error = "; ".join(filter(None, [outcome.error, f"the fallback was refused: {exc.message}"]))
        return outcome


def _confidence(value: object) -> float | None:
    """The reply's confidence: a number from 0 to 1 (anything else makes the reply malformed)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return None


async def apply_changes(
    agent: AgentSpec, repo: Repository, record: Record, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Changes `record` as PATCH (and, for `state`, PUT .../state) would; raises ApiError when refused.
    Returns the changes made, values that equal the record's being left out."""
    path = agent.path
    values = {name: value for name, value in values.items() if record.get(name) != value}
    target = values.pop("state", None) if path.workflow is not None else None
    if not values and target is None:
        return {}
    try:
        checked = path.model.model_validate(values).model_dump(by_alias=True, exclude_unset=True)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ApiError(422, "validation_error", problems) from None
    check_changes(path.meta, checked)
    changes = dict(checked)
    fill(changes, path.fill, f"agent:{agent.name}")
    # A move is decided by the workflow (allowed target, guards, effects) as PUT .../state decides it.
    move = path.workflow.move(str(target), changes) if target is not None and path.workflow is not None else None

    def plan(current: Record) -> Change:
        # Like PATCH: the rules see the record as the change leaves it, read under the write's lock.
        enforce(path.rules, {**current, **changes})
        return move(current) if move is not None else Change(changes)

    updated = await repo.modify(record["id"], plan)
    if updated is None:
        raise ApiError(404, "not_found", f"the {agent.entity} no longer exists")
    result = {**checked, **({"state": target} if target is not None else {})}
    return orjson.loads(orjson.dumps(result, default=str))


# The store of the open storage's runs, read by the agent-runs endpoints.
_store: list[RunStore] = []


async def runs_of(entity: str, record_id: UUID) -> list[dict[str, Any]]:
    return await _store[0].of_record(entity, record_id) if _store else []


@asynccontextmanager
async def running(
    agents: Sequence[AgentSpec],
    subscriptions: Sequence[tuple[str, str, AgentSpec]],
    repositories: Mapping[str, Repository],
    pool: ConnectionPool | None,
    outbox: list[dict[str, Any]] | None,
) -> AsyncIterator[None]:
    """Runs the agents for the lifetime of the application (app/main.py's lifespan).

    On PostgreSQL the dispatcher and the agents run in a process of their own (app/worker.py, one
    per application process, restarted if it dies), so that their work never takes the request
    path's CPU; DISPATCH_MODE=inline runs them in this process instead. The memory backend's
    outbox lives in this process, so its dispatcher does too.
    """
    store: RunStore = PostgresRunStore(pool) if pool is not None else MemoryRunStore()
    _store[:] = [store]
    observability.watch(lambda: observability.count_agent_runs(store.outcomes))
    provider = select_provider()
    try:
        if isinstance(provider, NoProvider):
            names = ", ".join(a.name for a in agents)
            logger.warning("agents disabled (%s): %s; %s", names, provider.reason, provider.hint)
            yield
        elif pool is not None and DispatchSettings().DISPATCH_MODE == "process":
            async with worker_process():
                yield
        else:
            async with dispatching(provider, subscriptions, repositories, pool, outbox, store):
                yield
    finally:
        _store.clear()


@asynccontextmanager
async def dispatching(
    provider: Provider,
    subscriptions: Sequence[tuple[str, str, AgentSpec]],
    repositories: Mapping[str, Repository],
    pool: ConnectionPool | None,
    outbox: list[dict[str, Any]] | None,
    store: RunStore,
) -> AsyncIterator[None]:
    """The dispatcher of this process, delivering events to the agents subscribed to them."""
    settings = DispatchSettings()
    # A handler gets 90% of the lease; a model call must fit in it, or the run would be cut short
    # and claimed again while its first attempt may still have applied its changes.
    needed = provider.timeout / 0.9 + 10.0
    if settings.DISPATCH_LEASE_SECONDS < needed:
        logger.warning("DISPATCH_LEASE_SECONDS raised to %.0f s to outlast SVC_AI_TIMEOUT", needed)
        settings.DISPATCH_LEASE_SECONDS = needed
    client = LlmClient(provider)
    runtime = AgentRuntime(client, store, repositories, settings.DISPATCH_LEASE_SECONDS)
    for event, entity, agent in subscriptions:
        events.subscribe(event, runtime.handler(agent), entity)
    dispatcher = (
        PostgresDispatcher(pool, settings)
        if pool is not None
        else MemoryDispatcher(outbox if outbox is not None else [], settings)
    )
    await dispatcher.start()
    logger.info("agents enabled with %s (%s)", provider.describe(), provider.reason)
    try:
        yield
    finally:
        await dispatcher.stop()
        events.reset()
        await client.aclose()


@asynccontextmanager
async def worker_process() -> AsyncIterator[None]:
    """Keeps `python -m app.worker` running beside this process until the application stops."""
    backend_dir = Path(__file__).resolve().parent.parent
    # The worker names its claims after this process (`claimed_by` in the events table).
    env = {**os.environ, "DISPATCH_REPLICA": f"{socket.gethostname()}:{os.getpid()}"}
    current: list[asyncio.subprocess.Process] = []

    async def supervise() -> None:
        while True:
            process = await asyncio.create_subprocess_exec(sys.executable, "-m", "app.worker", cwd=backend_dir, env=env)
            current[:] = [process]
            code = await process.wait()
            logger.error("the events dispatcher process exited with status %s; starting it again", code)
            await asyncio.sleep(1.0)

    task = asyncio.create_task(supervise(), name="events-worker")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for process in current:
            if process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 10)
                except TimeoutError:
                    process.kill()
                    await process.wait()
