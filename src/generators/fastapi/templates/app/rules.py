"""Validation rules of Route endpoints: each failing rule answers with its contract's on_fail."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import ApiError


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
