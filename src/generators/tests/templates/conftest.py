"""Fixtures of the black-box suite. Run it against a live app:

    BASE_URL=http://127.0.0.1:8000 pytest tests

AUTH_ENABLED (default: as the contracts say) must match the app's setting.
"""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from charter_client import Api

CASES: dict[str, Any] = json.loads((Path(__file__).parent / "cases.json").read_text(encoding="utf-8"))
BASE_URL = os.environ.get("BASE_URL", "http://127.0.0.1:8000")
AUTH_ENABLED = os.environ.get("AUTH_ENABLED", "true" if CASES["auth"] else "false").lower() in ("1", "true", "yes")


def cases(kind: str) -> list[Any]:
    """pytest parameters of one kind of case, each named by its id."""
    return [pytest.param(case, id=case["id"]) for case in CASES[kind]]


@pytest.fixture(scope="session")
def api() -> Iterator[Api]:
    client = Api(BASE_URL, CASES, AUTH_ENABLED)
    response = client.http.get("/health")
    assert response.status_code == 200, f"the app at {BASE_URL} does not answer /health: {response.status_code}"
    yield client
    left = client.cleanup()
    assert not left, "records the suite could not delete:\n" + "\n".join(left)


def needs_actor(api: Api, entity: str, operation: str) -> str | None:
    """The user to act as; skips when auth is on and no bootstrap user may call the operation."""
    user = api.actor(entity, operation)
    if api.auth_enabled and user is None:
        pytest.skip(f"no bootstrap user with a password may call {operation} on {entity}")
    return user


def pytest_report_header() -> list[str]:
    lines = [f"app under test: {BASE_URL} (AUTH_ENABLED={AUTH_ENABLED})"]
    lines += [f"not covered: {reason}" for reason in CASES["uncovered"]]
    return lines
