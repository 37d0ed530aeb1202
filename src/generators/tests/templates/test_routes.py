"""Every Route: create, get, list with paging and filters, update, delete, 404s and its rules."""

import uuid
from typing import Any

import pytest

from charter_client import Api
from conftest import CASES, cases, needs_actor

ROUTES = cases("routes")


def entity_of(route: dict[str, Any]) -> dict[str, Any]:
    return CASES["entities"][route["entity"]]


@pytest.mark.parametrize("route", ROUTES)
def test_create_get_update_delete(api: Api, route: dict[str, Any]) -> None:
    name, spec = route["entity"], entity_of(route)
    needs_actor(api, name, "create")
    body = api.payload(name)
    created = api.post(name, body)
    assert created.status_code == 201, created.text
    record = created.json()
    uuid.UUID(record["id"])
    for field in spec["echoed"]:
        assert record[field] == body[field], f"{field}: sent {body[field]!r}, got {record[field]!r}"
    assert record["_links"]["self"] == f"{spec['path']}/{record['id']}"
    if spec["stateMachine"]:
        assert record["state"] == spec["initialState"]

    if "get" in route["as"]:
        fetched = api.call(name, "get", "GET", api.path(name, record["id"]))
        assert fetched.status_code == 200, fetched.text
        assert fetched.json()["id"] == record["id"]
        for field in spec["echoed"]:
            assert fetched.json()[field] == body[field]

    if "update" in route["as"] and spec["update"] is not None:
        updated = api.call(name, "update", "PATCH", api.path(name, record["id"]), json=spec["update"])
        assert updated.status_code == 200, updated.text
        for field, value in spec["update"].items():
            assert updated.json()[field] == value
        if "get" in route["as"]:
            again = api.call(name, "get", "GET", api.path(name, record["id"])).json()
            for field, value in spec["update"].items():
                assert again[field] == value

    if "delete" in route["as"]:
        deleted = api.call(name, "delete", "DELETE", api.path(name, record["id"]))
        assert deleted.status_code == 204, deleted.text
        assert deleted.content == b""
        gone = api.call(name, "get", "GET", api.path(name, record["id"]))
        assert gone.status_code == 404
        listed = api.call(name, "list", "GET", spec["path"], params={"limit": 1000})
        assert record["id"] not in {item["id"] for item in listed.json()["items"]}


@pytest.mark.parametrize("route", ROUTES)
def test_list_pages_and_filters(api: Api, route: dict[str, Any]) -> None:
    name, spec = route["entity"], entity_of(route)
    needs_actor(api, name, "create")
    needs_actor(api, name, "list")
    marker = spec["marker"]
    tag = f"charter-page {uuid.uuid4().hex[:12]}"
    overrides = {marker: tag} if marker else {}
    ids = {api.create(name, overrides)["id"] for _ in range(3)}
    if marker is None:
        page = api.call(name, "list", "GET", spec["path"], params={"limit": 2, "offset": 0})
        assert page.status_code == 200, page.text
        assert len(page.json()["items"]) == 2
        assert page.json()["total"] >= 3
        return
    query = {marker: tag, "limit": 2}
    first = api.call(name, "list", "GET", spec["path"], params={**query, "offset": 0})
    second = api.call(name, "list", "GET", spec["path"], params={**query, "offset": 2})
    assert first.status_code == 200, first.text
    assert first.json()["total"] == 3
    assert len(first.json()["items"]) == 2
    assert second.json()["total"] == 3
    assert len(second.json()["items"]) == 1
    seen = [item["id"] for item in first.json()["items"] + second.json()["items"]]
    assert set(seen) == ids
    assert all(item[marker] == tag for item in first.json()["items"])
    elsewhere = api.call(name, "list", "GET", spec["path"], params={marker: f"{tag} none"})
    assert elsewhere.json()["items"] == []
    assert elsewhere.json()["total"] == 0
    if spec["stateMachine"]:
        in_state = api.call(name, "list", "GET", spec["path"], params={marker: tag, "state": spec["initialState"]})
        assert in_state.json()["total"] == 3
    too_large = api.call(name, "list", "GET", spec["path"], params={"limit": 1001})
    assert too_large.status_code == 422


@pytest.mark.parametrize("route", ROUTES)
def test_absent_records_are_404(api: Api, route: dict[str, Any]) -> None:
    name, spec = route["entity"], entity_of(route)
    absent = api.path(name, str(uuid.uuid4()))
    requests = [("get", "GET", absent, None), ("update", "PATCH", absent, spec["update"] or {})]
    requests += [
        ("delete", "DELETE", absent, None),
        ("transition", "PUT", f"{absent}/state", {"state": spec["initialState"]}),
    ]
    checked = 0
    for operation, method, path, body in requests:
        if operation not in route["as"] or (operation == "transition" and not spec["stateMachine"]):
            continue
        if api.auth_enabled and route["as"][operation] is None:
            continue
        response = api.call(name, operation, method, path, json=body)
        assert response.status_code == 404, f"{method} {path}: {response.status_code} {response.text}"
        assert response.json()["error"] == "not_found"
        checked += 1
    if checked == 0:
        pytest.skip("no operation on a single record may be called")


@pytest.mark.parametrize("route", ROUTES)
def test_required_fields_are_required(api: Api, route: dict[str, Any]) -> None:
    name, spec = route["entity"], entity_of(route)
    if not spec["required"]:
        pytest.skip(f"{name} has no required field")
    needs_actor(api, name, "create")
    response = api.post(name, {})
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "validation_error"


@pytest.mark.parametrize("case", cases("rules"))
def test_validation_rule_refuses(api: Api, case: dict[str, Any]) -> None:
    name = case["entity"]
    needs_actor(api, name, case["operation"])
    if case["operation"] == "create":
        response = api.post(name, api.payload(name, case["body"]))
    else:
        needs_actor(api, name, "create")
        record = api.create(name)
        response = api.call(name, "update", "PATCH", api.path(name, record["id"]), json=case["body"])
    assert response.status_code == case["status"], response.text
    assert response.json()["error"] == case["error"]


@pytest.mark.parametrize("case", cases("deletes"))
def test_delete_follows_on_delete(api: Api, case: dict[str, Any]) -> None:
    name, field, target = case["entity"], case["field"], case["target"]
    needs_actor(api, name, "create")
    needs_actor(api, name, "get")
    needs_actor(api, target, "delete")
    record = api.create(name)
    target_id = record[field]
    deleted = api.call(target, "delete", "DELETE", api.path(target, target_id))
    after = api.call(name, "get", "GET", api.path(name, record["id"]))
    if case["onDelete"] == "restrict":
        assert deleted.status_code == 409, deleted.text
        assert deleted.json()["error"] == "conflict"
        assert after.status_code == 200 and after.json()[field] == target_id
    elif case["onDelete"] == "cascade":
        assert deleted.status_code == 204, deleted.text
        assert after.status_code == 404, after.text
    else:
        assert deleted.status_code == 204, deleted.text
        assert after.status_code == 200 and after.json()[field] is None, after.text
