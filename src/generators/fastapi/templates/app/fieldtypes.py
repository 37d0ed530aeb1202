"""Input types that keep request values inside what both storage backends can hold.

Without them a value the model accepts could still fail later, as an unhandled 500: an integer
beyond BIGINT, a number orjson cannot write, or a datetime without an offset next to ones with
(Python cannot compare the two, so the memory backend could not sort them).
"""

from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, Field


def as_utc(value: datetime) -> datetime:
    """A datetime without an offset is taken as UTC, on both backends alike."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def json_safe(value: Any) -> Any:
    """Refuses what JSON columns and responses cannot hold (integers beyond 64 bits)."""
    try:
        orjson.dumps(value)
    except TypeError as exc:
        raise ValueError(f"not storable as JSON: {exc}") from None
    return value


# integer fields are BIGINT columns.
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
JsonObject = Annotated[dict[str, Any], AfterValidator(json_safe)]
JsonItem = Annotated[Any, AfterValidator(json_safe)]
