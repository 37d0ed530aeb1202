"""The HTTP client of the black-box suite: logs in, creates records (their references first),
remembers what it created and deletes it again at the end."""

import uuid
from collections.abc import Mapping
from typing import Any

import httpx

Json = dict[str, Any]


class Api:
    def __init__(self, base_url: str, cases: Mapping[str, Any], auth_enabled: bool) -> None:
        self.http = httpx.Client(base_url=base_url.rstrip("/"), timeout=30.0)
        self.cases = cases
        self.auth_enabled = auth_enabled
        self.run = uuid.uuid4().hex[:10]
        self._tokens: dict[str, str] = {}
        self._created: list[tuple[str, str]] = []

    # --- auth

    def user(self, user_id: str) -> Json:
        auth = self.cases["auth"] or {"users": []}
        for user in auth["users"]:
            if user["id"] == user_id:
                return dict(user)
        raise KeyError(f"no bootstrap user {user_id!r} in the contracts")

    def login(self, email: str, password: str) -> httpx.Response:
        return self.http.post(self.cases["auth"]["loginPath"], json={"email": email, "password": password})

    def token(self, user_id: str) -> str:
        if user_id not in self._tokens:
            user = self.user(user_id)
            response = self.login(user["email"], user["password"])
            assert response.status_code == 200, f"login of {user_id} failed: {response.status_code} {response.text}"
            self._tokens[user_id] = response.json()["access_token"]
        return self._tokens[user_id]

    def actor(self, entity: str, operation: str) -> str | None:
        """The bootstrap user allowed to call `operation` on `entity` (None: no token needed)."""
        for route in self.cases["routes"]:
            if route["entity"] == entity:
                return route["as"].get(operation)
        return None

    def request(self, method: str, path: str, *, as_user: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if self.auth_enabled and as_user is not None:
            headers["Authorization"] = f"Bearer {self.token(as_user)}"
        return self.http.request(method, path, headers=headers, **kwargs)

    def call(self, entity: str, operation: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A request as the user the contracts allow for this operation."""
        return self.request(method, path, as_user=self.actor(entity, operation), **kwargs)

    # --- records

    def path(self, entity: str, record_id: str | None = None) -> str:
        base = self.cases["entities"][entity]["path"]
        return base if record_id is None else f"{base}/{record_id}"

    def payload(self, entity: str, overrides: Mapping[str, Any] | None = None) -> Json:
        """The entity's sample body with `overrides`; each {"$ref": entity} becomes a new record's id."""
        body = {**self.cases["entities"][entity]["payload"], **(overrides or {})}
        for name, value in list(body.items()):
            if isinstance(value, dict) and set(value) == {"$ref"}:
                body[name] = self.create(value["$ref"])["id"]
        marker = self.cases["entities"][entity]["marker"]
        if marker is not None and marker not in (overrides or {}):
            body[marker] = f"charter-test {self.run}"
        return body

    def create(self, entity: str, overrides: Mapping[str, Any] | None = None) -> Json:
        response = self.post(entity, self.payload(entity, overrides))
        assert response.status_code == 201, f"create {entity}: {response.status_code} {response.text}"
        return response.json()

    def post(self, entity: str, body: Json) -> httpx.Response:
        response = self.call(entity, "create", "POST", self.path(entity), json=body)
        if response.status_code == 201:
            self._created.append((entity, response.json()["id"]))
        return response

    def cleanup(self) -> list[str]:
        """Deletes every record this run created, newest first; returns what could not be deleted."""
        left: list[str] = []
        while self._created:
            entity, record_id = self._created.pop()
            response = self.call(entity, "delete", "DELETE", self.path(entity, record_id))
            # 404: the test deleted it already. 409: a soft-deleted record still points at it.
            if response.status_code not in (204, 404, 409):
                left.append(f"{entity} {record_id}: {response.status_code} {response.text}")
        self.http.close()
        return left
