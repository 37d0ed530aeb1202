"""Domain events: stored in the `events` outbox with each write, then handed to subscribers.

The outbox row is written in the same transaction as the record (see the repositories); the
in-process subscribers (agents, integrations) are called after the write succeeded, in order.
"""

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

logger = logging.getLogger("app.events")

Subscriber = Callable[[str, str, Mapping[str, Any]], None]

_subscribers: dict[str, list[Subscriber]] = {}


def subscribe(event: str, subscriber: Subscriber) -> None:
    _subscribers.setdefault(event, []).append(subscriber)


def publish(events: Sequence[str], entity: str, record: Mapping[str, Any]) -> None:
    for event in events:
        for subscriber in _subscribers.get(event, ()):
            try:
                subscriber(event, entity, record)
            except Exception:
                # A subscriber's failure must not undo a committed write.
                logger.exception("subscriber of %s failed", event)
