"""Validation rules of Route endpoints: each failing rule answers with its contract's on_fail."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import ApiError
from app.repositories.base import Change, Plan, Record


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    check: Callable[[Mapping[str, Any]], bool]
    status: int
    error: str
    message: str | None = None


def enforce(rules: Sequence[Rule], values: Mapping[str, Any]) -> None:
    for rule in rules:
        if not rule.check(values):
            message = rule.message or f"rule failed: {rule.source}"
            raise ApiError(rule.status, rule.error, message, {"rule": rule.source})


def checked(rules: Sequence[Rule], changes: Record, events: Sequence[str] = ()) -> Plan:
    """The plan of an update whose rules must hold for the record as the change leaves it: they
    are checked on the row the write holds (Repository.modify), so no concurrent update of the
    record slips between the check and the write."""

    def plan(current: Record) -> Change:
        enforce(rules, {**current, **changes})
        return Change(changes, events)

    return plan
