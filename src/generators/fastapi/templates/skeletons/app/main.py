"""The __domain__ API: the FastAPI application and its wiring."""

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from app import apidoc, deps, errors, observability, readiness
# charter: if agents
from app.agent_specs import AGENTS, SUBSCRIPTIONS
from app.agents import running as run_agents
# charter: end
# charter: if auth
from app.auth import routes as auth_routes
from app.auth import setup as auth_setup
# charter: end
from app.config import settings
from app.custom import routes as custom_routes
from app.domain import DOMAIN, ENTITIES
from app.edge import EdgeMiddleware
from app.responses import ORJSONResponse
from app.routes import ROUTERS
from app.storage import DESTRUCTIVE_COMMAND, open_storage

logger = logging.getLogger("app")


def settle_gc() -> None:
    """Takes what start-up built out of the garbage collector's way, and collects less often.

    The modules, models, routes and connections made at start live as long as the process: after
    gc.freeze() no full collection walks them again (each one a pause for every request in flight).
    A first threshold of tens of thousands of net allocations instead of Python's 700
    (GC_THRESHOLDS) makes the young collection, which a busy process would otherwise run every few
    requests, rare; requests leave no cycles behind, so their objects are freed by reference
    counting anyway.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.GC_THRESHOLDS)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    backend, url, pool_size = settings.DATABASE_BACKEND, settings.DATABASE_URL, settings.DATABASE_POOL_SIZE
    pool_timeout = settings.DATABASE_POOL_TIMEOUT_SECONDS
    migrate, batch_creates = settings.DATABASE_MIGRATE == "auto", settings.DATABASE_BATCH_CREATES
    async with (
        open_storage(backend, url, pool_size, ENTITIES, pool_timeout, migrate, batch_creates) as storage,
        observability.running(storage.pool, storage.outbox),
    ):
        deps.use_repositories(storage.repositories)
        readiness.set_unready(storage.unready, storage.unready_error)
        readiness.set_held(storage.held)
        if storage.held:
            # Held back by DATABASE_MIGRATE=auto: the old columns and tables stay, with their data.
            logger.warning(
                "destructive migration step(s) held back, run `%s` to apply them: %s",
                DESTRUCTIVE_COMMAND,
                "; ".join(storage.held),
            )
        if storage.unready:
            # Serves 503 with the reason (app/readiness.py) instead of failing on every request.
            logger.error("not ready: %s", storage.unready)
            yield
            return
        # charter: if auth
        app.state.auth_provider = auth_setup.make_provider()
        app.state.user_store = await auth_setup.make_user_store(storage.pool)
        if not settings.AUTH_ENABLED:
            logger.warning("AUTH_ENABLED=false: every request is treated as an administrator")
        # charter: end
        settle_gc()
        # charter: if agents
        # Agents run off the request path, fed by the events dispatcher (app/agents.py).
        async with run_agents(AGENTS, SUBSCRIPTIONS, storage.repositories, storage.pool, storage.outbox):
            yield
        # charter: else
        yield
        # charter: end


# /docs and /redoc are served below from the app's own files: FastAPI's defaults load their
# scripts from a CDN, which leaves the pages blank without internet. The app is FastAPI's with the
# trace sampler's decision made before FastAPI's telemetry starts (app/observability.py).
app = observability.App(
    title="__title__ API",
    lifespan=lifespan,
    default_response_class=ORJSONResponse,
    docs_url=None,
    redoc_url=None,
    telemetry=observability.telemetry(),
    servers=apidoc.SERVERS,
    license_info=apidoc.LICENSE,
)
# One router per resource (app/routes/), each with its prefix, tags and route class, ahead of the
# app's own routes: the router tries routes in the order they were added, and a request to a
# resource, nearly every request, would otherwise be matched against /metrics, the docs, /health
# and sign-in first. No path of theirs can clash: the compiler refuses a resource at a reserved
# path. FastAPI nests the app's lifespan one level deeper for each included router: with a few
# hundred routers, the app's start-up overflows Python's stack. These routers have no lifespan, so
# the app keeps its own.
lifespan_context = app.router.lifespan_context
for router in ROUTERS:
    app.include_router(router)
# charter: if auth
app.include_router(auth_routes.router)
# charter: end
app.router.lifespan_context = lifespan_context
apidoc.install(app)
errors.install(app)
app.add_middleware(EdgeMiddleware, max_bytes=settings.MAX_BODY_BYTES, cors_origins=settings.cors_origins)
# Request ids, logs, /metrics and traces (app/observability.py): outside the edge, so that its
# refusals carry a request id and count too.
observability.install(app, "__domain__")

_DOCS_FILES = Path(__file__).parent / "static" / "docs"
app.mount("/static/docs", StaticFiles(directory=_DOCS_FILES), name="docs-static")
# A data: URL: the default favicon is fetched from FastAPI's site.
_NO_FAVICON = "data:,"
# The pages may load nothing from elsewhere either: ReDoc's "by Redocly" logo and Swagger UI's
# validator badge would each be a request to a third party. Both pages run inline scripts, and
# ReDoc's search runs in a worker made from a blob.
_DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'"
)


def _docs_page(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = _DOCS_CSP
    return page


@app.get("/docs", include_in_schema=False)
async def swagger_ui() -> HTMLResponse:
    return _docs_page(
        get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - Swagger UI",
            swagger_js_url="/static/docs/swagger-ui-bundle.js",
            swagger_css_url="/static/docs/swagger-ui.css",
            swagger_favicon_url=_NO_FAVICON,
        )
    )


@app.get("/redoc", include_in_schema=False)
async def redoc() -> HTMLResponse:
    return _docs_page(
        get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - ReDoc",
            redoc_js_url="/static/docs/redoc.standalone.js",
            redoc_favicon_url=_NO_FAVICON,
            with_google_fonts=False,
        )
    )


class Health(BaseModel):
    status: Literal["ok"]
    domain: str
    # Destructive migration steps held back (`version: warning`); `python -m app.migrate
    # --allow-destructive` applies them.
    pending_destructive: list[str] = []


# 4XX: what a client gets for a request the server cannot parse (a malformed request line or
# header), refused by uvicorn before the app runs, as plain text.
_REFUSED_BY_THE_SERVER: dict[int | str, dict[str, Any]] = {
    "4XX": {
        "description": "Malformed request, refused by the server",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    }
}


@app.get(
    "/health",
    tags=["health"],
    operation_id="health",
    responses={**errors.error_responses(500, 503), **_REFUSED_BY_THE_SERVER},
)
async def health() -> Health:
    return Health(status="ok", domain=DOMAIN, pending_destructive=readiness.held())


# The user's own endpoints (app/custom/routes.py, written once by charter and never again).
app.include_router(custom_routes.router)
