"""The baseline of bench/backend.mjs: a minimal hand-written FastAPI + asyncpg app.

It serves the same `tickets` table as the generated helpdesk backend (GET by id, list, create),
the way one would write it by hand without a generator: no auth, no rules, no outbox.
"""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID, uuid4

import asyncpg
import orjson
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

COLUMNS = (
    "id, number, created_at, updated_at, deleted_at, deleted_by, is_deleted, tags, due_at, sla_breached, title, "
    "description, priority, type, customer_id, assignee_id, reporter_email, resolution, estimate_hours, story_points, "
    "due_date, escalated, external_url, attachments, custom_data, reference_code, created_by, state"
)

pool: asyncpg.Pool


async def init(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec(
        "jsonb", encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads, schema="pg_catalog"
    )


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    global pool
    pool = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=10, init=init)
    yield
    await pool.close()


app = FastAPI(lifespan=lifespan)


class TicketIn(BaseModel):
    title: str
    customer_id: UUID
    description: str | None = None
    priority: str = "medium"


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@app.get("/tickets/{ticket_id}")
async def get_ticket(ticket_id: UUID) -> dict:
    row = await pool.fetchrow(f"SELECT {COLUMNS} FROM tickets WHERE id = $1", ticket_id)
    if row is None:
        raise HTTPException(404)
    return dict(row)


@app.get("/tickets")
async def list_tickets(limit: int = 100, offset: int = 0) -> dict:
    rows = await pool.fetch(f"SELECT {COLUMNS} FROM tickets ORDER BY created_at, id LIMIT $1 OFFSET $2", limit, offset)
    total = await pool.fetchval("SELECT count(*) FROM tickets")
    return {"items": [dict(r) for r in rows], "total": total}


@app.post("/tickets", status_code=201)
async def create_ticket(body: TicketIn) -> dict:
    row = await pool.fetchrow(
        f"INSERT INTO tickets (id, number, title, customer_id, description, priority, state) "
        f"VALUES ($1, 'TKT-' || lpad(nextval('ticket_number_seq')::text, 5, '0'), $2, $3, $4, $5, 'new') "
        f"RETURNING {COLUMNS}",
        uuid4(),
        body.title,
        body.customer_id,
        body.description,
        body.priority,
    )
    return dict(row)
