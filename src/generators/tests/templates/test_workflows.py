"""Every allowed move of each workflow, a refused move from every state, and each guard."""

from typing import Any

import pytest

from charter_client import Api
from conftest import cases, needs_actor


@pytest.mark.parametrize("case", cases("transitions"))
def test_transition(api: Api, case: dict[str, Any]) -> None:
    name = case["entity"]
    needs_actor(api, name, "create")
    record = api.create(name, case["setup"])
    state_path = f"{api.path(name, record['id'])}/state"
    for state in case["path"]:
        moved = api.request("PUT", state_path, as_user=case["as"], json={"state": state})
        assert moved.status_code == 200, f"on the way, -> {state}: {moved.status_code} {moved.text}"
    response = api.request("PUT", state_path, as_user=case["as"], json={"state": case["target"]})
    assert response.status_code == case["status"], response.text
    if case["status"] == 200:
        assert response.json()["state"] == case["target"]
        assert api.call(name, "get", "GET", api.path(name, record["id"])).json()["state"] == case["target"]
    else:
        assert response.json()["error"] == case["error"]
        expected = case["path"][-1] if case["path"] else record["state"]
        assert api.call(name, "get", "GET", api.path(name, record["id"])).json()["state"] == expected
