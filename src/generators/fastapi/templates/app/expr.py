"""Helpers of the compiled contract expressions (validation rules and guard conditions).

A missing value never raises: ordering comparisons with a missing side are false, and the
length of a missing value is 0, so a rule reads the way its author wrote it.
"""

from typing import Any


def length(value: Any) -> int:
    return 0 if value is None else len(value)


def is_set(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value != {}


def lt(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a < b


def le(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a <= b


def gt(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a > b


def ge(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a >= b


def contains(container: Any, item: Any) -> bool:
    return container is not None and item in container
