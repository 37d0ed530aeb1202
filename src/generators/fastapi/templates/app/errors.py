"""Every failure has the same body: {"error": name, "message": text, "details": optional}."""

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from app import healer, observability
from app.cursor import InvalidCursor
from app.pool import PoolTimeoutError
from app.responses import ORJSONResponse

_NAMES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "too_many_requests",
    503: "service_unavailable",
}


class ErrorBody(BaseModel):
    """The body of every failure, whatever its status."""

    error: str = Field(description="A stable name of the failure, e.g. `not_found`")
    message: str = Field(description="What went wrong, for a person")
    details: Any = Field(None, description="Structured facts of the failure, when there are any")
    request_id: str | None = Field(None, description="The request's id, as in its `X-Request-ID` header and the logs")


# What each status means on this API, and the headers it carries (response_headers in the document).
_MEANINGS: dict[int, str] = {
    400: "Malformed request (a body that is not JSON, an invalid state move)",
    401: "Missing, invalid or expired bearer token",
    403: "The caller's role may not do this",
    404: "No such record",
    409: "Conflict with stored data (a duplicate, a missing or still referenced record, a concurrent change)",
    413: "The request body is too large",
    415: "The request body is not JSON",
    422: "The request is invalid (types, constraints, validation rules, an Idempotency-Key reused with another body)",
    429: "Too many requests; retry after the time given",
    500: "Internal error, reported to the Healer",
    503: (
        "The service cannot answer yet: every database connection is busy (retry after the time given),"
        " or the database lacks the app's tables (the message names the command that creates them)"
    ),
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}},
    429: {"Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}},
    503: {"Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}},
}
# What a 503 asks the client to wait: a busy pool frees connections within a request's time.
_POOL_RETRY_AFTER_SECONDS = 1


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: each status it can answer with, carrying ErrorBody.

    The one way an operation declares a failure status in the OpenAPI document: generated routes
    get theirs from the generator (src/generators/fastapi/statuses.ts), hand-written ones
    (app/auth/routes.py) list them here.
    """
    out: dict[int | str, dict[str, Any]] = {}
    for status in sorted(set(statuses)):
        response: dict[str, Any] = {
            "model": ErrorBody,
            "description": _MEANINGS.get(status, _NAMES.get(status, "error")),
        }
        if status in _HEADERS:
            response["headers"] = _HEADERS[status]
        out[status] = response
    return out


class ApiError(Exception):
    """A failure the client can act on: rendered with its status, never reported to the Healer."""

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        details: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.details = details
        self.headers = headers


def not_found(entity: str, record_id: object) -> ApiError:
    return ApiError(404, "not_found", f"{entity} {record_id} does not exist")


class Refused(ApiError):
    """Raised by a before-hook (app/custom/hooks/) to refuse a write, which then does not happen.

    The client gets `status` with the error "refused" and `message`: 422 (the default) when the
    request cannot be accepted as sent, 409 when it conflicts with what is stored.
    """

    def __init__(self, message: str, status: Literal[409, 422] = 422, details: Any = None) -> None:
        super().__init__(status, "refused", message, details)


def error_response(
    status: int,
    error: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
) -> ORJSONResponse:
    body: dict[str, Any] = {"error": error, "message": message}
    if details is not None:
        body["details"] = details
    request_id = observability.request_id()
    if request_id is not None:
        body["request_id"] = request_id
    return ORJSONResponse(body, status_code=status, headers=headers)


async def _api_error(_request: Request, exc: Exception) -> ORJSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.error, exc.message, exc.details, exc.headers)


def allowed_methods(request: Request) -> str:
    """The methods the document declares for the request's path (and HEAD with GET), for `Allow`.

    Starlette's own 405 names only the methods of the first route whose path matched, while a
    path is served by one route per method here.
    """
    path = request.scope["path"]
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        if re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)), path):
            methods.update(method.upper() for method in operations)
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


async def _http_error(request: Request, exc: Exception) -> ORJSONResponse:
    assert isinstance(exc, HTTPException)
    name = _NAMES.get(exc.status_code, "error")
    message = exc.detail if isinstance(exc.detail, str) else name
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405:
        headers["Allow"] = allowed_methods(request)
    return error_response(exc.status_code, name, message, headers=headers or None)


def _count(n: Any, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _num(n: Any) -> str:
    # A contract's bound of 1000 on a number field reaches pydantic as 1000.0.
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _one_of(ctx: dict[str, Any]) -> str:
    return f"must be one of {ctx['expected']}"


# A person's words for pydantic's error types, by type; the context holds the limits.
_PLAIN: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda _: "is required",
    "extra_forbidden": lambda _: "is not a field of this request",
    "string_type": lambda _: "must be text",
    "string_too_short": lambda c: (
        "must not be empty" if c["min_length"] == 1 else f"must be at least {_count(c['min_length'], 'character')}"
    ),
    "string_too_long": lambda c: f"must be at most {_count(c['max_length'], 'character')}",
    "string_pattern_mismatch": lambda _: "is not in the expected format",
    "too_short": lambda c: f"must have at least {_count(c['min_length'], 'item')}",
    "too_long": lambda c: f"must have at most {_count(c['max_length'], 'item')}",
    "literal_error": _one_of,
    "enum": _one_of,
    "int_type": lambda _: "must be a whole number",
    "int_parsing": lambda _: "must be a whole number",
    "int_from_float": lambda _: "must be a whole number",
    "float_type": lambda _: "must be a number",
    "float_parsing": lambda _: "must be a number",
    "finite_number": lambda _: "must be a finite number",
    "greater_than": lambda c: f"must be greater than {_num(c['gt'])}",
    "greater_than_equal": lambda c: f"must be at least {_num(c['ge'])}",
    "less_than": lambda c: f"must be less than {_num(c['lt'])}",
    "less_than_equal": lambda c: f"must be at most {_num(c['le'])}",
    "multiple_of": lambda c: f"must be a multiple of {_num(c['multiple_of'])}",
    "bool_type": lambda _: "must be true or false",
    "bool_parsing": lambda _: "must be true or false",
    "uuid_type": lambda _: "must be an id (a UUID)",
    "uuid_parsing": lambda _: "must be an id (a UUID)",
    "date_type": lambda _: "must be a date, YYYY-MM-DD",
    "date_parsing": lambda _: "must be a date, YYYY-MM-DD",
    "date_from_datetime_parsing": lambda _: "must be a date, YYYY-MM-DD",
    "datetime_type": lambda _: "must be a date and time, YYYY-MM-DDTHH:MM",
    "datetime_parsing": lambda _: "must be a date and time, YYYY-MM-DDTHH:MM",
    "datetime_from_date_parsing": lambda _: "must be a date and time, YYYY-MM-DDTHH:MM",
    "list_type": lambda _: "must be a list",
    "dict_type": lambda _: "must be a JSON object",
    "model_attributes_type": lambda _: "must be a JSON object",
    "model_type": lambda _: "must be a JSON object",
    "json_invalid": lambda _: "is not valid JSON",
    # The app's own checks (app/fieldtypes.py) word their ValueError for a person already.
    "value_error": lambda c: str(c["error"]),
}


def plain_message(error: Mapping[str, Any]) -> str:
    """What an error of pydantic says, as a person would: `must be at most 80 characters`.

    Said of the field, whose name goes before it (or a label, in a form). A type without words of
    its own keeps pydantic's message, its first letter lowered.
    """
    ctx = error.get("ctx") or {}
    words = _PLAIN.get(error.get("type", ""))
    if words is not None:
        try:
            return words(ctx)
        except (KeyError, TypeError):
            pass
    msg = str(error.get("msg", "")) or "is invalid"
    return msg[:1].lower() + msg[1:]


def field_error(loc: Sequence[Any], msg: str, kind: str, message: str) -> dict[str, Any]:
    """One item of a 422's details: pydantic's `loc`, `msg` and `type` as ever, and for a person the
    `field` it concerns (None for the whole body) and a plain `message` about it, an item of a
    list or a key of an object named first (`item 2: must be text`)."""
    names = [part for part in loc[1:] if isinstance(part, str | int)]
    field = names[0] if names and isinstance(names[0], str) else None
    where = [f"item {part + 1}" if isinstance(part, int) else part for part in names[1:]] if field else []
    return {
        "loc": list(loc),
        "msg": msg,
        "type": kind,
        "field": field,
        "message": ": ".join([*[str(w) for w in where], message]),
    }


def _summary(details: Sequence[Mapping[str, Any]]) -> str:
    said = [f"{d['field']} {d['message']}" if d["field"] else d["message"] for d in details]
    return f"the request is invalid: {'; '.join(said)}" if said else "the request is invalid"


async def _validation_error(_request: Request, exc: Exception) -> ORJSONResponse:
    assert isinstance(exc, RequestValidationError)
    # Every error at once (pydantic checks the whole body), each with its field and plain words.
    # Only location, message and type of pydantic's: its `input` and `ctx` may hold values that
    # are not JSON (or that echo secrets back).
    details = [
        field_error(e.get("loc", ()), e.get("msg", ""), e.get("type", ""), plain_message(e)) for e in exc.errors()
    ]
    return error_response(422, "validation_error", _summary(details), details)


async def _invalid_cursor(_request: Request, exc: Exception) -> ORJSONResponse:
    details = [field_error(["query", "after"], str(exc), "cursor", str(exc))]
    return error_response(422, "validation_error", str(exc), details)


async def _unhandled(request: Request, exc: Exception) -> ORJSONResponse:
    healer.report(request, exc, 500)
    # Starlette renders this outside every middleware: the request id header is added here.
    request_id = observability.request_id()
    headers = {"X-Request-ID": request_id} if request_id else {}
    # Starlette raises the exception again once this answer is sent, and uvicorn then closes the
    # connection: said here, a keep-alive client does not send its next request into the closing
    # socket (a POST it cannot safely retry).
    headers["Connection"] = "close"
    return error_response(500, "internal_error", "an internal error occurred", headers=headers)


async def _pool_timeout(_request: Request, exc: Exception) -> ORJSONResponse:
    # Overload, not a fault of the app or its contracts: nothing for the Healer.
    headers = {"Retry-After": str(_POOL_RETRY_AFTER_SECONDS)}
    return error_response(503, "service_unavailable", str(exc), headers=headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(InvalidCursor, _invalid_cursor)
    app.add_exception_handler(PoolTimeoutError, _pool_timeout)
    app.add_exception_handler(Exception, _unhandled)
