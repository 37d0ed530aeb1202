"""Domain events: stored in the `events` outbox with each write, then handed to subscribers.

The outbox row is written in the same transaction as the record (see the repositories). Handing
the events to the in-process subscribers (agents) is the dispatcher's job (app/dispatcher.py): it
reads the outbox after commit, off the request path, in order per record, at least once. A write
only tells the dispatcher that there is something new (`publish`), which costs nothing when no
dispatcher listens.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    """One outbox row, as the subscribers see it."""

    id: str
    name: str
    entity: str
    record_id: Any
    # The record as the write left it.
    data: Mapping[str, Any]
    occurred_at: datetime
    # 1 on the first delivery; more when an earlier delivery failed or its replica died.
    attempts: int = 1


Handler = Callable[[Event], Awaitable[None]]

# Event name -> (entity or None for any entity, handler), in subscription order.
_handlers: dict[str, list[tuple[str | None, Handler]]] = {}
_listeners: list[Callable[[], None]] = []


def subscribe(event: str, handler: Handler, entity: str | None = None) -> None:
    """Calls `handler` for every `event` (of `entity` only, when given) the dispatcher delivers."""
    _handlers.setdefault(event, []).append((entity, handler))


def handlers_for(event: Event) -> list[Handler]:
    return [handler for entity, handler in _handlers.get(event.name, ()) if entity in (None, event.entity)]


def has_subscribers() -> bool:
    return bool(_handlers)


def listen(callback: Callable[[], None]) -> None:
    """`callback` runs after every write that stored events (the dispatcher wakes up on it)."""
    _listeners.append(callback)


def reset() -> None:
    """Forgets subscribers and listeners (the application is shutting down)."""
    _handlers.clear()
    _listeners.clear()


def publish(events: Sequence[str], entity: str, record: Mapping[str, Any]) -> None:
    """Called by the repositories once a write and its outbox rows are committed."""
    if events:
        for callback in _listeners:
            callback()
