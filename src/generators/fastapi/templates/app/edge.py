"""The one middleware in front of the routes: readiness, trailing slashes, body size and type, and CORS.

Pure ASGI and a single layer, because every layer is paid on every request: a request without an
`Origin` header (every server-to-server call) never touches the CORS machinery, and one without a
body never has its `receive` wrapped.
"""

from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import readiness
from app.bodies import is_json_media
from app.errors import error_response
from app.responses import ORJSONResponse

# Methods whose requests carry no body here: passed on without counting bytes.
_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


def _refusal(status: int, error: str, message: str) -> ORJSONResponse:
    return error_response(status, error, message)


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int, cors_origins: list[str]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # Requests that carry an Origin go through Starlette's CORS handling, then the same path.
        self.cors = CORSMiddleware(
            self._guarded,
            allow_origins=cors_origins,
            allow_credentials="*" not in cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        original = scope
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            # Every path answers with and without a trailing slash: one route each, no redirect.
            scope = dict(scope)
            scope["path"] = path.rstrip("/") or "/"
            raw_path = scope.get("raw_path")
            if raw_path:
                scope["raw_path"] = raw_path.rstrip(b"/") or b"/"
        try:
            if any(name == b"origin" for name, _ in scope["headers"]):
                await self.cors(scope, receive, send)
            else:
                await self._guarded(scope, receive, send)
        finally:
            # The router sets the matched route on the copy: hand it back, so app/observability.py
            # labels a collection request by its route without matching it a second time.
            if scope is not original and "route" in scope:
                original["route"] = scope["route"]

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuses bodies over the limit with 413 before they are read into memory, and bodies
        that are not JSON (every route here reads JSON) with 415 rather than a parse error; and
        everything with 503 while the database lacks the app's tables (app/readiness.py)."""
        refused = readiness.refusal(scope["path"])
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope["method"] in _NO_BODY:
            await self.app(scope, receive, send)
            return
        has_body, content_type = False, None
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.max_bytes:
                    message = f"the request body exceeds {self.max_bytes} bytes"
                    await _refusal(413, "payload_too_large", message)(scope, receive, send)
                    return
                has_body = has_body or value.strip(b"0 ") != b""
            elif name == b"transfer-encoding":
                has_body = True
            elif name == b"content-type":
                content_type = value
        if has_body and content_type is not None and not is_json_media(content_type):
            message = "the request body must be JSON (Content-Type: application/json)"
            await _refusal(415, "unsupported_media_type", message)(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            # A chunked body has no Content-Length: count what arrives instead.
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, f"the request body exceeds {self.max_bytes} bytes")
            return message

        await self.app(scope, limited_receive, send)
