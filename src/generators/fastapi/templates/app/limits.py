"""Refuses request bodies over the size limit with 413 before they are read into memory."""

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.responses import ORJSONResponse

# Methods whose requests carry no body: passed through untouched (most of the traffic).
_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


class BodySizeLimitMiddleware:
    """Pure ASGI (no per-request task like BaseHTTPMiddleware), so it costs nearly nothing."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _NO_BODY:
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                response = ORJSONResponse(
                    {"error": "payload_too_large", "message": f"the request body exceeds {self.max_bytes} bytes"},
                    status_code=413,
                )
                await response(scope, receive, send)
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
