"""Login of every bootstrap user, a wrong password, and 401 / 403 on every protected endpoint."""

import uuid
from typing import Any

import pytest

from charter_client import Api
from conftest import CASES, cases

pytestmark = pytest.mark.skipif(CASES["auth"] is None, reason="the domain has no auth Infra contract")

USERS = [pytest.param(user, id=user["id"]) for user in (CASES["auth"] or {"users": []})["users"]]


@pytest.fixture(autouse=True)
def _auth_on(api: Api) -> None:
    if not api.auth_enabled:
        pytest.skip("AUTH_ENABLED is false for this run")


@pytest.mark.parametrize("user", USERS)
def test_login(api: Api, user: dict[str, Any]) -> None:
    response = api.login(user["email"], user["password"])
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "bearer"
    me = api.http.get("/auth/me", headers={"Authorization": f"Bearer {response.json()['access_token']}"})
    assert me.status_code == 200, me.text
    assert me.json()["role"] == user["role"]


@pytest.mark.parametrize("user", USERS)
def test_wrong_password_is_refused(api: Api, user: dict[str, Any]) -> None:
    response = api.login(user["email"], user["password"] + "-wrong")
    assert response.status_code == 401
    assert "access_token" not in response.json()


OPERATIONS = {
    "list": ("GET", ""),
    "get": ("GET", "/{id}"),
    "create": ("POST", ""),
    "update": ("PATCH", "/{id}"),
    "delete": ("DELETE", "/{id}"),
    "transition": ("PUT", "/{id}/state"),
}


@pytest.mark.parametrize("case", cases("access"))
def test_access_is_enforced(api: Api, case: dict[str, Any]) -> None:
    method, suffix = OPERATIONS[case["operation"]]
    path = api.path(case["entity"]) + suffix.replace("{id}", str(uuid.uuid4()))
    body = None if method in ("GET", "DELETE") else {}
    response = api.request(method, path, as_user=case["as"], json=body)
    assert response.status_code == case["status"], response.text
    assert response.json()["error"] == ("unauthorized" if case["status"] == 401 else "forbidden")
    if case["status"] == 401:
        assert response.headers["www-authenticate"].lower().startswith("bearer")
