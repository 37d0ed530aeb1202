"""The state machine of a Workflow contract: which moves are allowed and what they do."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.errors import ApiError
from app.expr import is_set
from app.repositories.base import Change, Plan, Record


class StateChange(BaseModel):
    """Body of `PUT {base_path}/{id}/state`."""

    model_config = ConfigDict(extra="forbid")

    state: str


@dataclass(frozen=True, slots=True)
class Guard:
    require_fields: tuple[str, ...] = ()
    condition: Callable[[Mapping[str, Any]], bool] | None = None
    condition_source: str | None = None


@dataclass(frozen=True, slots=True)
class Effects:
    """What a move does besides changing the state: events to emit and fields to set."""

    events: tuple[str, ...] = ()
    set: Mapping[str, Any] = field(default_factory=dict)


NO_EFFECTS = Effects()


@dataclass(frozen=True, slots=True)
class Workflow:
    name: str
    initial: str
    states: tuple[str, ...]
    terminal: frozenset[str]
    transitions: Mapping[str, tuple[str, ...]]
    guards: Mapping[tuple[str, str], Guard] = field(default_factory=dict)
    effects: Mapping[tuple[str, str], Effects] = field(default_factory=dict)
    # type_overrides: the value of `type_field` selects replacement transitions per source state.
    type_field: str | None = None
    type_overrides: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    def targets(self, record: Mapping[str, Any]) -> tuple[str, ...]:
        """States the record may move to now."""
        current = record.get("state")
        if not isinstance(current, str) or current in self.terminal:
            return ()
        if self.type_field is not None:
            override = self.type_overrides.get(str(record.get(self.type_field)))
            if override is not None and current in override:
                return override[current]
        return self.transitions.get(current, ())

    def plan(self, record: Mapping[str, Any], target: str) -> Effects:
        """Checks a move of `record` to `target`; returns its effects or raises 400 / 422."""
        current = record.get("state")
        allowed = self.targets(record)
        if target not in allowed:
            raise ApiError(
                400,
                "invalid_transition",
                f"cannot move from {current!r} to {target!r}",
                {"from": current, "to": target, "allowed": list(allowed)},
            )
        guard = self.guards.get((str(current), target))
        if guard is not None:
            missing = [name for name in guard.require_fields if not is_set(record.get(name))]
            if missing:
                raise ApiError(
                    422,
                    "guard_failed",
                    f"moving to {target!r} requires: {', '.join(missing)}",
                    {"missing_fields": missing},
                )
            if guard.condition is not None and not guard.condition(record):
                raise ApiError(
                    422,
                    "guard_failed",
                    f"moving to {target!r} requires: {guard.condition_source}",
                    {"condition": guard.condition_source},
                )
        return self.effects.get((str(current), target), NO_EFFECTS)

    def move(self, target: str, changes: Record, events: Sequence[str] = ()) -> Plan:
        """The write of a move to `target`: decided (allowed move, guard, effects) on the record as
        the write holds it (Repository.modify), so a concurrent update cannot break the guard
        between the check and the change of state."""

        def plan(current: Record) -> Change:
            effects = self.plan(current, target)
            return Change({**effects.set, **changes, "state": target}, (*effects.events, *events))

        return plan
