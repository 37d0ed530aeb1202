"""Input types that keep request values exact and inside what both storage backends can hold.

Without them a value the model accepts could still fail later, as an unhandled 500: a NUL byte
(PostgreSQL refuses it in text and JSON), a lone surrogate (no UTF-8 encoder writes it, so neither
asyncpg nor the JSON renderer can), an integer beyond BIGINT, an infinite number, or a datetime
without an offset next to ones with (Python cannot compare the two, so the memory backend could not
sort them).

Body types are strict: JSON `true` is not the integer 1, `"7"` is not 7 and `0` is not a date.
Query types parse text, the only thing a query string carries, but only in the field's own format.
"""

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

import orjson
from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, BeforeValidator, Field, GetJsonSchemaHandler, Strict, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypeAliasType

# What no backend stores: NUL, and UTF-16 surrogates outside a pair (Python strings hold them alone).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# The request schemas say so, so that a client (or a fuzzer) knows before sending.
NO_NUL_PATTERN = "^[^\\x00]*$"
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_ISO_DATETIME = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d")
# ISO 8601 durations of days, hours, minutes and seconds (DURATION_PATTERN in the compiler's
# field-types.ts): years and months have no fixed length, so no timedelta or interval comparison keeps them.
ISO_DURATION_PATTERN = r"^-?P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$"
_ISO_DURATION = re.compile(ISO_DURATION_PATTERN)


def storable_text(value: str) -> str:
    if _UNSTORABLE.search(value):
        raise ValueError("must not contain NUL characters or unpaired surrogates")
    return value


class _DeclareNoNul:
    """Adds NO_NUL_PATTERN to a string's JSON schema when it declares no pattern of its own."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema.setdefault("pattern", NO_NUL_PATTERN)
        return json_schema


def as_utc(value: datetime) -> datetime:
    """A datetime without an offset is taken as UTC, on both backends alike."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _iso_date_text(value: Any) -> Any:
    # Before pydantic's own parsing, which also takes numbers (Unix time) for dates.
    if isinstance(value, date) or (isinstance(value, str) and _ISO_DATE.fullmatch(value)):
        return value
    raise ValueError("must be a date, YYYY-MM-DD")


def _iso_datetime_text(value: Any) -> Any:
    if isinstance(value, datetime) or (isinstance(value, str) and _ISO_DATETIME.match(value)):
        return value
    raise ValueError("must be a date and time, YYYY-MM-DDTHH:MM[:SS][offset]")


def _iso_duration_text(value: Any) -> Any:
    # Before pydantic's own parsing, which also takes numbers (seconds) and `HH:MM:SS`.
    if isinstance(value, timedelta) or (isinstance(value, str) and _ISO_DURATION.match(value)):
        return value
    raise ValueError("must be an ISO 8601 duration, e.g. PT1H30M or P2DT4H")


def iso_duration(value: timedelta) -> str:
    """A timedelta as ISO 8601 text, as pydantic writes it: what responses carry for duration fields."""
    return str(_DURATION_TEXT.dump_python(value, mode="json"))


def enum_date(value: str) -> date:
    """A date enum's value (its Literal keeps the text) as the date both backends store."""
    return date.fromisoformat(value)


def stored_enum(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    """Maps a stored date or datetime back to its text among a date or datetime enum's `choices`.

    The enum's Literal keeps the contract's text, while both backends hand back date or datetime
    objects: a model validated from a stored record (the after-hooks get one) must accept them.
    """

    def to_text(value: Any) -> Any:
        if isinstance(value, datetime):
            for choice in choices:
                if as_utc(datetime.fromisoformat(choice)) == as_utc(value):
                    return choice
        elif isinstance(value, date):
            return value.isoformat()
        return value

    return to_text


def enum_datetime(value: str) -> datetime:
    """A datetime enum's value as the datetime both backends store, UTC when it names no offset."""
    return as_utc(datetime.fromisoformat(value))


def whole_number(value: Any) -> Any:
    # JSON Schema's integer is any number without a fraction (24.0 is 24); booleans and text are not.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def not_boolean(value: Any) -> Any:
    # Before an enum of numbers: a Literal compares values, and Python's False == 0.
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


def boolean_only(value: Any) -> Any:
    # Before an enum of booleans: a Literal compares values, and Python's 1 == True.
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def query_scalar(value: Any) -> Any:
    # A query parameter is text, and an enum of numbers or booleans compares values: parse it first.
    if not isinstance(value, str):
        return value
    if value in ("true", "false"):
        return value == "true"
    for parse in (int, float):
        try:
            return parse(value)
        except ValueError:
            pass
    return value


def _email(value: str) -> str:
    storable_text(value)
    try:
        # Syntax only, as the `email` format of JSON Schema means: a dotless or `.test` domain is
        # still a well-formed address (email_validator still refuses `.local`, `.invalid`, `.arpa`).
        checked = validate_email(value, check_deliverability=False, test_environment=True, globally_deliverable=False)
    except EmailNotValidError:
        # The messages of these ValueErrors are said of the field, in a person's words (app/errors.py).
        raise ValueError("must be a valid e-mail address") from None
    return checked.normalized


def _walk_storable(value: Any, depth: int = 0) -> None:
    if isinstance(value, str):
        storable_text(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            storable_text(key)
            _walk_storable(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _walk_storable(item, depth + 1)
    elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise ValueError("must not hold NaN or Infinity, which JSON cannot")


def json_safe(value: Any) -> Any:
    """Refuses what JSON columns and responses cannot hold: integers beyond 64 bits, NUL, unpaired
    surrogates, non-finite numbers, nesting deeper than the renderer allows."""
    try:
        orjson.dumps(value)
    except TypeError as exc:
        raise ValueError(f"cannot be stored as JSON ({exc})") from None
    _walk_storable(value)
    return value


# Integers a JSON client can hold exactly (RFC 7493: +-(2**53 - 1), JavaScript's safe integers),
# inside the BIGINT column. The BIGINT bounds themselves do not survive the OpenAPI document:
# FastAPI writes a body model's bounds as floats, and a client reads 9.223372036854775e+18 as a
# decimal above any float near 2**63, then sends values the model refuses.
INT64_MIN, INT64_MAX = -(2**53 - 1), 2**53 - 1
_INT64 = Field(ge=INT64_MIN, le=INT64_MAX)

# Text of string, text and array-of-string fields, in bodies and queries alike.
Text = Annotated[str, AfterValidator(storable_text), _DeclareNoNul()]
Email = Annotated[str, AfterValidator(_email), Field(json_schema_extra={"format": "email"})]
# integer fields are BIGINT columns; number fields DOUBLE PRECISION, which JSON cannot write when infinite.
# The validator comes last: before the bounds, it would hide them from the JSON schema.
Int64 = Annotated[int, Strict(), _INT64, BeforeValidator(whole_number)]
Float64 = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Bool = Annotated[bool, Strict()]
IsoDate = Annotated[date, BeforeValidator(_iso_date_text)]
UtcDatetime = Annotated[datetime, BeforeValidator(_iso_datetime_text), AfterValidator(as_utc)]
IsoDuration = Annotated[
    timedelta,
    BeforeValidator(_iso_duration_text),
    Field(json_schema_extra={"format": "duration", "pattern": ISO_DURATION_PATTERN}),
]
_DURATION_TEXT = TypeAdapter(timedelta)


class _DeclareJsonKeys:
    """States an object's keys as `propertyNames`. Pydantic writes a key pattern as
    `patternProperties`, which leaves every key outside the pattern allowed, with any value."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["propertyNames"] = {"pattern": NO_NUL_PATTERN}
        return json_schema


class _DeclareItemsUnevaluated:
    """States a JSON array's items as `unevaluatedItems`, which JSON Schema 2020-12 (OpenAPI 3.1)
    applies, without `items` or `prefixItems` beside it, to every item: the same array as `items`.

    TypeScript generators write `items: {$ref: JsonValue}` inside JsonValue as an indexed access
    type that refers to itself through an array, which tsc refuses (TS2502; openapi-typescript's
    issue 1603). Through `unevaluatedItems` they write the array as `unknown[]`, while a JSON
    Schema validator still checks each item as before."""

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        if "items" in json_schema:
            json_schema["unevaluatedItems"] = json_schema.pop("items")
        return json_schema


# JSON values as the request schemas describe them, so that what a schema allows is what the model
# takes: strings and keys without NUL, and numbers within Int64's range, integers kept exact (a larger
# one is refused, never stored rounded). json_safe then refuses only what no schema states: nesting
# deeper than the renderer goes.
_JsonKey = Annotated[str, AfterValidator(storable_text)]
_JsonNumber = Annotated[float, Strict(), _INT64, Field(allow_inf_nan=False)]
JsonValue = TypeAliasType(
    "JsonValue",
    "Annotated[dict[_JsonKey, JsonValue], _DeclareJsonKeys()] | Annotated[list[JsonValue], _DeclareItemsUnevaluated()]"
    " | Text | Bool | Int64 | _JsonNumber | None",
)
JsonObject = Annotated[dict[_JsonKey, JsonValue], _DeclareJsonKeys(), AfterValidator(json_safe)]
JsonItem = Annotated[JsonValue, AfterValidator(json_safe)]

# Query parameters arrive as text: numbers are parsed from it (bounds as above), never coerced from
# another JSON type since there is none.
QueryInt64 = Annotated[int, _INT64]
QueryFloat64 = Annotated[float, Field(allow_inf_nan=False)]
