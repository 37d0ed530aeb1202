"""Whether the database can serve the app: until it can, every request is answered 503.

Set once at start (app/main.py's lifespan, from app/storage.py's check). A process that found its
tables missing stays unready until restarted: what it set up on start (seeded users, the agents'
dispatcher) needs the tables, and an orchestrator's health probe restarts it.
"""

from app.responses import ORJSONResponse

_unready: list[str] = []
_error: list[str] = ["database_not_ready"]
# Destructive migration steps held back (`version: warning`): the app serves, /health says so.
_held: list[str] = []
# Paths served without the database: the API's documentation.
_OPEN = ("/docs", "/redoc", "/openapi.json", "/static/")


def set_unready(reason: str | None, error: str = "database_not_ready") -> None:
    _unready[:] = [reason] if reason else []
    _error[0] = error


def set_held(steps: list[str]) -> None:
    _held[:] = steps


def held() -> list[str]:
    return list(_held)


def refusal(path: str) -> ORJSONResponse | None:
    """The 503 answer for `path` while the database is not ready, else None."""
    if not _unready or path.startswith(_OPEN):
        return None
    return ORJSONResponse(
        {"error": _error[0], "message": _unready[0]},
        status_code=503,
        headers={"Retry-After": "10"},
    )
