"""JSON responses rendered with orjson, and the route class that checks them against their models.

The handlers build plain dicts and answer with ORJSONResponse, so FastAPI's own response-model pass
(validate, then serialise again) never runs: the fast path. What it would catch, an answer whose
shape differs from the document, CheckedRoute catches instead while RESPONSE_VALIDATION is on
(by default under APP_ENV=development and APP_ENV=test, see app/config.py).
"""

from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

import orjson
from fastapi.exceptions import ResponseValidationError
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.bodies import JsonBodyRoute
from app.config import settings
from app.fieldtypes import iso_duration


def _fallback(value: Any) -> str:
    # asyncpg's UUID subclass and Decimal values are not native to orjson; their text form is.
    # A duration field's timedelta is written in ISO 8601, as its response model declares it.
    if isinstance(value, timedelta):
        return iso_duration(value)
    return str(value)


class ORJSONResponse(JSONResponse):
    """JSONResponse (so FastAPI declares the route's response model in the OpenAPI document) with
    orjson rendering."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, default=_fallback, option=orjson.OPT_NON_STR_KEYS)


class CheckedRoute(JsonBodyRoute):
    """A route whose successful JSON answers are validated against its response_model (and whose
    JSON body is read in one pass, app/bodies.py).

    The body is validated as the client will read it (the bytes, in JSON mode), so what orjson
    rendered is checked too. A mismatch raises ResponseValidationError: a 500 reported to the
    Healer, as FastAPI's own response validation would. With RESPONSE_VALIDATION off the route is
    a JsonBodyRoute: nothing is added per request.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if not settings.validate_responses or self.response_model is None:
            return handler
        adapter: TypeAdapter[Any] = TypeAdapter(self.response_model)
        where = f"{','.join(sorted(self.methods or ()))} {self.path_format}"

        async def checked(request: Request) -> Response:
            response = await handler(request)
            body = getattr(response, "body", None)
            if 200 <= response.status_code < 300 and isinstance(body, bytes) and body:
                try:
                    adapter.validate_json(body)
                except ValidationError as exc:
                    raise ResponseValidationError(
                        exc.errors(include_url=False), body=body, endpoint_ctx={"path": where}
                    ) from exc
            return response

        return checked
