"""Serves every path with and without a trailing slash, with one route and no redirect."""

from starlette.types import ASGIApp, Receive, Scope, Send


class TrailingSlashMiddleware:
    """Pure ASGI: strips trailing slashes (never from "/") before routing, so `/tickets/` is `/tickets`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if len(path) > 1 and path.endswith("/"):
                scope = dict(scope)
                scope["path"] = path.rstrip("/") or "/"
                raw_path = scope.get("raw_path")
                if raw_path:
                    scope["raw_path"] = raw_path.rstrip(b"/") or b"/"
        await self.app(scope, receive, send)
