"""Opaque cursors for keyset pagination: `?after=<cursor>` continues a list where a page ended.

A cursor holds the sort key it was made for and the values of the ordering columns of the last row
of its page. Clients treat it as an opaque string; the server decodes it back to typed values (a
datetime stays a datetime, a UUID a UUID), which are then bound as query parameters like any other
value. A tampered cursor can only move the starting point, never change the query.
"""

import base64
import binascii
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any
from uuid import UUID

import orjson

# Type tags of the values a cursor carries; everything else is a JSON scalar as it is.
_DATETIME, _DATE, _UUID = "t", "d", "u"


class InvalidCursor(ValueError):
    """A bad `after` parameter: app/errors.py answers it with 422 like any invalid query parameter."""


def _tag(value: Any) -> Any:
    if isinstance(value, datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, date):
        return {_DATE: value.isoformat()}
    if isinstance(value, UUID):
        return {_UUID: str(value)}
    return value


def _untag(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        ((tag, text),) = value.items()
        if tag == _DATETIME:
            return datetime.fromisoformat(text)
        if tag == _DATE:
            return date.fromisoformat(text)
        if tag == _UUID:
            return UUID(text)
    if isinstance(value, (dict, list)):
        raise ValueError("not a scalar")
    return value


def encode(sort: str | None, values: Sequence[Any]) -> str:
    raw = orjson.dumps([sort, [_tag(v) for v in values]])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode(token: str, sort: str | None, width: int) -> tuple[Any, ...]:
    """The position in `token`; InvalidCursor when it is not a cursor of a list with this sort."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        made_for, values = orjson.loads(raw)
        position = tuple(_untag(v) for v in values)
    except (binascii.Error, ValueError, TypeError, orjson.JSONDecodeError):
        raise InvalidCursor("`after` is not a cursor returned by this list") from None
    if made_for != sort or len(position) != width:
        raise InvalidCursor("`after` was returned by a list with another sort; pass the same `sort`")
    return position
