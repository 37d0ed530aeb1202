"""Idempotent creates: a POST retried with the same `Idempotency-Key` answers its first response.

As the IETF httpapi draft "The Idempotency-Key HTTP Header Field" describes: the key is the
client's (a UUID, say), kept with the first response for IDEMPOTENCY_TTL_SECONDS; a repeat with the
same body gets that response (status and body, plus `Idempotent-Replayed: true`) without a second
record; a repeat with another body is refused with 422. Keys are per caller and per entity.

A repeat that arrives while the first request is still being processed waits for it and gets its
response (the draft suggests 409 there): the client gets its answer without retrying, and still
only one record is created.
"""

import hashlib
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import orjson
from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, StringConstraints, TypeAdapter, ValidationError

from app.config import settings
from app.errors import ApiError
from app.records import with_links
from app.repositories.base import IdempotentCreate, Record, Repository
from app.responses import ORJSONResponse

_DESCRIPTION = (
    "A unique key of this create (a UUID, say): a retry with the same key and body answers the first "
    "response instead of creating the record again."
)
_KEY = TypeAdapter(Annotated[str, StringConstraints(min_length=1, max_length=255)])

# The header as the document declares it. The create handlers read it with idempotency_key()
# rather than as a FastAPI header parameter: FastAPI re-derives a header parameter's model on every
# request, which cost a create more than the rest of its dependency solving.
_PARAMETER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": _DESCRIPTION,
    "schema": {
        "anyOf": [{"type": "string", "minLength": 1, "maxLength": 255}, {"type": "null"}],
        "description": _DESCRIPTION,
        "title": "Idempotency-Key",
    },
}


def with_idempotency_key(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`openapi_extra` of a create: `extra` plus the Idempotency-Key header parameter."""
    extra = dict(extra or {})
    extra["parameters"] = [*extra.get("parameters", ()), _PARAMETER]
    return extra


def idempotency_key(request: Request) -> str | None:
    """The request's Idempotency-Key, None without one; 422 like any invalid parameter."""
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    try:
        return _KEY.validate_python(key)
    except ValidationError as exc:
        errors = [{**e, "loc": ("header", "Idempotency-Key")} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


# The statuses a create with a key can add (422 `idempotency_key_reused`, 409) are declared with the
# others of the operation: src/generators/fastapi/statuses.ts.


def fingerprint(body: BaseModel) -> str:
    """The digest of a request body as validated: key order and spacing do not change it."""
    canonical = orjson.dumps(body.model_dump(mode="json", by_alias=True), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


async def create_once(
    repo: Repository,
    key: str,
    user_id: str,
    body: BaseModel,
    values: Record,
    events: Sequence[str],
    links: Mapping[str, str],
) -> Response:
    """Creates the record once per key; the response of the first request for every repeat."""
    # A Structured Fields string ("...", as the draft writes it) and a bare token are the same key.
    client_key = key[1:-1] if len(key) >= 2 and key[0] == key[-1] == '"' else key
    request = IdempotentCreate(
        key=orjson.dumps([repo.meta.name, user_id, client_key]).decode(),
        fingerprint=fingerprint(body),
        ttl_seconds=settings.IDEMPOTENCY_TTL_SECONDS,
    )

    def render(record: Record) -> bytes:
        return bytes(ORJSONResponse(with_links(record, links)).body)

    stored = await repo.create_once(request, values, events, render)
    if stored.fingerprint != request.fingerprint:
        raise ApiError(
            422,
            "idempotency_key_reused",
            "this Idempotency-Key was already used with a different request body; send a new key",
        )
    headers = {"Idempotent-Replayed": "true"} if stored.replayed else None
    return Response(stored.body, status_code=stored.status, media_type="application/json", headers=headers)
