"""Whether the database can serve the app: until it can, every request is answered 503.

Set once at start (app/main.py's lifespan, from app/storage.py's check). A process that found its
tables missing stays unready until restarted: what it set up on start (seeded users, the agents'
dispatcher) needs the tables, and an orchestrator's health probe restarts it.
"""

from app.responses import ORJSONResponse

_unready: list[str] = []
# Paths served without the database: the API's documentation.
_OPEN = ("/docs", "/redoc", "/openapi.json", "/static/")


def set_unready(reason: str | None) -> None:
    _unready[:] = [reason] if reason else []


def refusal(path: str) -> ORJSONResponse | None:
    """The 503 answer for `path` while the database is not ready, else None."""
    if not _unready or path.startswith(_OPEN):
        return None
    return ORJSONResponse(
        {"error": "database_not_ready", "message": _unready[0]},
        status_code=503,
        headers={"Retry-After": "10"},
    )
