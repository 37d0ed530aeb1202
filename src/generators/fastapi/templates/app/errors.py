"""Every failure has the same body: {"error": name, "message": text, "details": optional}."""

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from app import healer
from app.cursor import InvalidCursor
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
}


class ErrorBody(BaseModel):
    """The body of every failure (DESIGN.md)."""

    error: str = Field(description="A stable name of the failure, e.g. `not_found`")
    message: str = Field(description="What went wrong, for a person")
    details: Any = Field(None, description="Structured facts of the failure, when there are any")


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
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}},
    429: {"Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}},
}


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


async def _validation_error(_request: Request, exc: Exception) -> ORJSONResponse:
    assert isinstance(exc, RequestValidationError)
    # Only location, message and type: pydantic's `input` and `ctx` may hold values that are
    # not JSON (or that echo secrets back).
    details = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()
    ]
    return error_response(422, "validation_error", "the request is invalid", details)


async def _invalid_cursor(_request: Request, exc: Exception) -> ORJSONResponse:
    details = [{"loc": ["query", "after"], "msg": str(exc), "type": "cursor"}]
    return error_response(422, "validation_error", str(exc), details)


async def _unhandled(request: Request, exc: Exception) -> ORJSONResponse:
    healer.report(request, exc, 500)
    return error_response(500, "internal_error", "an internal error occurred")


def install(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(InvalidCursor, _invalid_cursor)
    app.add_exception_handler(Exception, _unhandled)
