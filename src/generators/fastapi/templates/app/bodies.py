"""JSON request bodies parsed and validated by pydantic in one pass, with FastAPI's answers.

FastAPI reads a body model in three steps: it parses the content type with the email package,
parses the bytes with the json module, then validates the objects that made. pydantic's own JSON
parser does all of it at once, a measurable part of what a whole create costs.

A body pydantic accepts from the JSON bytes goes straight to the handler. Anything else (no
content type, an empty body, invalid JSON, a value pydantic refuses) goes to FastAPI's own handler
of the route, which reads the body again from the request's cache and answers as it always does:
its errors, their locations and the JSON it tolerates (NaN, say) stay exactly FastAPI's. The route
keeps its body field too, so the OpenAPI document, built from it, does not change.
"""

import dataclasses
import functools
from collections.abc import Callable, Coroutine
from typing import Any

import fastapi.routing
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

Handler = Callable[[Request], Coroutine[Any, Any, Response]]

# Where the handler leaves the parsed body for the endpoint's wrapper (a key of the ASGI scope),
# and the name under which the wrapper gets the request when the endpoint does not take it.
_PARSED = "app.parsed_body"
_REQUEST = "_app_request"


def is_json_media(content_type: bytes) -> bool:
    """A JSON media type, as FastAPI tells one: application/json or application/*+json. The one
    test of it: app/edge.py refuses a body of any other type with 415."""
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


def _raising(exc: Exception) -> Callable[[], Coroutine[Any, Any, Message]]:
    async def receive() -> Message:
        raise exc

    return receive


def _settings_of(route: APIRoute) -> Any:
    """What FastAPI builds `route`'s handler from: the route itself, or, for a route of a router the
    app includes, the route's settings for that inclusion (prefix, dependencies, overrides), which
    fastapi.routing makes current while it builds the handler. That variable is FastAPI's own
    (0.165, pinned in requirements.txt): without it, the route is its own settings."""
    current = getattr(fastapi.routing, "_effective_route_context_var", None)
    context = current.get() if current is not None else None
    return context if context is not None and getattr(context, "original_route", None) is route else route


class JsonBodyRoute(APIRoute):
    """An APIRoute whose body, when it is one pydantic model, is parsed and validated in one pass."""

    def get_route_handler(self) -> Handler:
        fastapi_handler = super().get_route_handler()
        # The body parameter is taken out of the settings FastAPI builds the handler from: for an
        # included route, not the route itself (see _settings_of).
        route = _settings_of(self)
        body = route.dependant.body_params
        if len(body) != 1 or route._embed_body_fields or route.dependant.call is None:
            return fastapi_handler
        model = body[0].field_info.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return fastapi_handler
        name = body[0].name
        endpoint = route.dependant.call
        request_name = route.dependant.request_param_name

        @functools.wraps(endpoint)
        async def call(**values: Any) -> Any:
            request = values[request_name] if request_name else values.pop(_REQUEST)
            values[name] = request.scope.pop(_PARSED)
            return await endpoint(**values)

        # FastAPI's handler of the same route without the body parameter, calling the endpoint
        # through the wrapper above, which hands it the body parsed here.
        documented = route.dependant, route.body_field
        route.dependant = dataclasses.replace(
            route.dependant, body_params=[], call=call, request_param_name=request_name or _REQUEST
        )
        route.body_field = None
        try:
            parsed_handler = super().get_route_handler()
        finally:
            route.dependant, route.body_field = documented

        async def handler(request: Request) -> Response:
            try:
                raw = await request.body()
            except Exception as exc:
                # A body that could not be read (too large, the client gone): FastAPI's handler
                # meets the same exception where it reads the body, and answers as it would.
                return await fastapi_handler(Request(request.scope, _raising(exc)))
            content_type = request.headers.get("content-type")
            if raw and content_type is not None and is_json_media(content_type.encode("latin-1")):
                try:
                    request.scope[_PARSED] = model.model_validate_json(raw)
                except ValidationError:
                    pass
                else:
                    return await parsed_handler(request)
            return await fastapi_handler(request)

        return handler
