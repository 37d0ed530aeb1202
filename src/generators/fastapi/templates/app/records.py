"""Helpers the route handlers share: computed fields, update checks, links, list queries."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

from pydantic import BaseModel

from app.errors import ApiError
from app.repositories.base import EntityMeta, ListQuery, Page

_LIST_PARAMS = frozenset({"limit", "offset", "sort", "q", "after", "with_total"})


def fill(values: dict[str, Any], generators: Mapping[str, str], user_id: str) -> None:
    """Sets computed fields: `uuid`, `now` (and `now_on_update`) and `current_user`."""
    now = datetime.now(UTC)
    for column, kind in generators.items():
        if kind == "uuid":
            values[column] = uuid4()
        elif kind in ("now", "now_on_update"):
            values[column] = now
        elif kind == "current_user":
            values[column] = user_id


def check_changes(meta: EntityMeta, changes: Mapping[str, Any]) -> None:
    """Refuses updates of immutable fields and nulls in required ones."""
    immutable = sorted(meta.immutable.intersection(changes))
    if immutable:
        raise ApiError(
            422,
            "validation_error",
            f"immutable fields cannot change: {', '.join(immutable)}",
            {"immutable_fields": immutable},
        )
    nulls = sorted(name for name in meta.required.intersection(changes) if changes[name] is None)
    if nulls:
        raise ApiError(
            422, "validation_error", f"required fields cannot be null: {', '.join(nulls)}", {"null_fields": nulls}
        )


def with_links(record: dict[str, Any], links: Mapping[str, str]) -> dict[str, Any]:
    record_id = str(record["id"])
    record["_links"] = {name: template.replace("{id}", record_id) for name, template in links.items()}
    return record


def sort_key(meta: EntityMeta, value: str | None) -> str | None:
    """Checks a list's `sort` parameter (`field` or `-field`) against the sortable fields."""
    if value is not None and value.removeprefix("-") not in meta.sortable:
        raise ValueError(f"not a sort key of {meta.name}; sortable: {', '.join(sorted(meta.sortable))}")
    return value


def page_body(page: Page, links: Mapping[str, str]) -> dict[str, Any]:
    """The body of a list response: {items, total, next_cursor}."""
    return {"items": [with_links(r, links) for r in page.items], "total": page.total, "next_cursor": page.next_cursor}


def list_query(params: BaseModel) -> ListQuery:
    """A repository query from the validated query parameters of a list endpoint."""
    values = params.model_dump(by_alias=True, exclude_none=True)
    filters = {name: value for name, value in values.items() if name not in _LIST_PARAMS}
    return ListQuery(
        limit=values.get("limit", 100),
        offset=values.get("offset", 0),
        filters=filters,
        sort=values.get("sort"),
        search=values.get("q") or None,
        after=values.get("after"),
        with_total=values.get("with_total", True),
    )
