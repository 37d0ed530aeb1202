"""Every failure has the same body: {"error": name, "message": text, "details": optional}."""

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
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
}


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


async def _http_error(_request: Request, exc: Exception) -> ORJSONResponse:
    assert isinstance(exc, HTTPException)
    name = _NAMES.get(exc.status_code, "error")
    message = exc.detail if isinstance(exc.detail, str) else name
    return error_response(exc.status_code, name, message, headers=dict(exc.headers) if exc.headers else None)


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
