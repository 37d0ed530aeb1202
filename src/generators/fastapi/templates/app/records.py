"""Helpers the route handlers share: computed fields, update checks, links, list queries."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from uuid import uuid4

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.errors import ApiError
from app.repositories.base import EntityMeta, ListQuery, Page

_LIST_PARAMS = frozenset({"limit", "offset", "sort", "q", "after", "with_total"})


Q = TypeVar("Q", bound=BaseModel)


def parse_query(model: type[Q], request: Request) -> Q:
    """The query string validated by `model` in one pass (422 like any invalid parameter).

    FastAPI's own query models (`Annotated[Model, Query()]`) inspect every field on every request;
    a list endpoint has one per filterable field, so the list routes validate the query here and
    declare it in the OpenAPI document with query_parameters().
    """
    # An empty `after` is no cursor: the first page, as a form that leaves the field blank means.
    params = {name: value for name, value in request.query_params.items() if name != "after" or value}
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        errors = [{**e, "loc": ("query", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


def query_parameters(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` declaring the fields of a query model as the route's query parameters."""
    schema = model.model_json_schema(by_alias=True)
    required = set(schema.get("required", ()))
    parameters = [
        {"name": name, "in": "query", "required": name in required, "schema": field}
        for name, field in schema["properties"].items()
    ]
    return {"parameters": parameters, "description": _QUERY_RULES_TEXT, "x-query-rules": list(_QUERY_RULES)}


# What the parameters' schemas cannot say: the only reasons a schema-valid list query is refused.
_QUERY_RULES = (
    "`after` takes only a `next_cursor` of this list, returned for the same `sort`",
    "`after` and a non-zero `offset` exclude each other",
)
_QUERY_RULES_TEXT = "Paging by cursor: " + "; ".join(_QUERY_RULES) + " (see x-query-rules)."


def fill(values: dict[str, Any], generators: Mapping[str, str], user_id: str) -> None:
    """Sets computed fields: `uuid`, `now` (and `now_on_update`) and `current_user`.

    `uuid_text` and `today` are the same for a text field and a date field, whose columns take a
    str and a date rather than a UUID and a datetime.
    """
    now = datetime.now(UTC)
    for column, kind in generators.items():
        if kind == "uuid":
            values[column] = uuid4()
        elif kind == "uuid_text":
            values[column] = str(uuid4())
        elif kind in ("now", "now_on_update"):
            values[column] = now
        elif kind == "today":
            values[column] = now.date()
        elif kind == "current_user":
            values[column] = user_id
        else:
            # The generator and this module disagree: fail loudly rather than leave the field unset.
            raise ValueError(f"unknown fill kind {kind!r} for {column!r}")


def check_changes(meta: EntityMeta, changes: Mapping[str, Any]) -> None:
    """Refuses updates of immutable fields and nulls in required ones."""
    # `errors` says it per field, as a 422 of the request models does (app/errors.py).
    immutable = sorted(meta.immutable.intersection(changes))
    if immutable:
        raise ApiError(
            422,
            "validation_error",
            f"immutable fields cannot change: {', '.join(immutable)}",
            {"immutable_fields": immutable, "errors": [_said(name, "cannot change once set") for name in immutable]},
        )
    nulls = sorted(name for name in meta.required.intersection(changes) if changes[name] is None)
    if nulls:
        raise ApiError(
            422,
            "validation_error",
            f"required fields cannot be null: {', '.join(nulls)}",
            {"null_fields": nulls, "errors": [_said(name, "is required") for name in nulls]},
        )


def _said(field: str, message: str) -> dict[str, Any]:
    return {"field": field, "message": message}


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
    """The body of a list response: {items, total, next_cursor}, each record with its links."""
    # with_links inlined: the templates are split once per page, not once per record.
    templates = [(name, template.split("{id}")) for name, template in links.items()]
    for record in page.items:
        # The id as the text it is rendered as anyway. PostgreSQL's rows hold it as text already
        # (the uuid codec of app/storage.py); the memory store holds a uuid.UUID.
        record_id = record["id"] = str(record["id"])
        record["_links"] = {name: record_id.join(parts) for name, parts in templates}
    return {"items": page.items, "total": page.total, "next_cursor": page.next_cursor}


def list_query(meta: EntityMeta, params: BaseModel) -> ListQuery:
    """A repository query from the validated query parameters of a list endpoint."""
    values = params.model_dump(by_alias=True, exclude_none=True)
    lower: dict[str, Any] = {}
    upper: dict[str, Any] = {}
    for column in meta.ranged:
        if (bound := values.pop(f"{column}_from", None)) is not None:
            lower[column] = bound
        if (bound := values.pop(f"{column}_to", None)) is not None:
            upper[column] = bound
    filters = {name: value for name, value in values.items() if name not in _LIST_PARAMS}
    return ListQuery(
        limit=values.get("limit", 100),
        offset=values.get("offset", 0),
        filters=filters,
        lower=lower,
        upper=upper,
        sort=values.get("sort"),
        search=values.get("q") or None,
        after=values.get("after"),
        with_total=values.get("with_total", True),
    )
