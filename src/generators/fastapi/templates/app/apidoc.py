"""What the OpenAPI document states beyond what FastAPI derives from the routes.

- Every operation states its security: FastAPI writes `security` only where a route depends on a
  security scheme, and an operation without it inherits the document's default, which a linter
  (and a reader) cannot tell from an oversight. A public one (`GET /health`, `POST /auth/login`)
  says `security: []`.
- `servers`: the API is served at the root of the host that serves the document, a relative URL
  that holds wherever the app is deployed.
- `info.license`: none is granted unless the owners of the domain state one: proprietary, as an
  SPDX reference of its own (`LicenseRef-`), which they change here.
"""

from typing import Any

from fastapi import FastAPI

SERVERS = [{"url": "/", "description": "The host that serves this document"}]
LICENSE = {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"}
_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def complete(document: dict[str, Any]) -> dict[str, Any]:
    """The document with `security` on every operation, in place (and returned). An app without
    auth has no security scheme: all its operations are public."""
    for operations in document.get("paths", {}).values():
        for method, operation in operations.items():
            if method in _METHODS:
                operation.setdefault("security", [])
    return document


def install(app: FastAPI) -> None:
    """Completes the document FastAPI builds (once, on the first request for it)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
