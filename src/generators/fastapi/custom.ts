import type { EntityIR } from "../../compiler/ir.js";
import { hashHeader, ownedHeader } from "../header.js";
import { pyModuleName } from "./python.js";

/**
 * The backend's extension points (docs/customizing.md): app/custom/ holds the user's code. The
 * package markers are generated; the router and the hooks are `owned`, written once and then the
 * user's. Paths are relative to backend/.
 */
export interface CustomModule {
  path: string;
  content: string;
  owned: boolean;
}

const CUSTOM_ROUTES = `"""Your own endpoints: app/main.py includes this router after the generated ones.

Add path operations below; they share the app's errors, auth and repositories. Charter's
docs/customizing.md has more.
"""

from fastapi import APIRouter

router = APIRouter(tags=["custom"])

# An example (the repositories, the current user and roles are the generated routes' own):
#
# from app.deps import CurrentUser, TicketRepo
# from app.repositories.base import ListQuery
#
#
# @router.get("/custom/open-tickets")
# async def open_tickets(user: CurrentUser, repo: TicketRepo) -> dict[str, int]:
#     page = await repo.list(ListQuery(filters={"state": "open"}))
#     return {"open": page.total or 0}
`;

/**
 * One hooks module per entity rather than one per domain: an owned file is never rewritten, so a
 * per-domain module could not gain the hooks of an entity added later, while a new entity simply
 * gets a new module. It starts with no function, only their signatures as comments: app/hooks.py
 * takes the functions a module defines and does nothing for the others, so the routes build no
 * record for an after-hook nobody wrote, and a hook added later never breaks this file.
 */
function hooksModule(entity: EntityIR): string {
  const cls = entity.className;
  const label = entity.label.toLowerCase();
  const module = pyModuleName(entity.name);
  return `"""Hooks around the writes of ${label} records through the API.

Define any of the functions below (uncomment it) and the generated routes (app/routes/) call it,
on the memory and the PostgreSQL repository alike; a hook you do not define does nothing (see
app/hooks.py). A before-hook refuses the write by raising app.errors.Refused: nothing is written
and the client gets a 422 with your message (Refused(message, status=409) for a conflict). An
after-hook runs once the write is stored, with the record as the API returns it. See charter's
docs/customizing.md.
"""

# from uuid import UUID
#
# from app.errors import Refused
# from app.models.${module} import ${cls}Create, ${cls}Public, ${cls}Update
# from app.principal import User
#
#
# async def before_create(data: ${cls}Create, user: User) -> None:
#     """Before a ${label} is created."""
#     if user.role != "admin":
#         raise Refused("only an administrator may create a ${label}")
#
#
# async def after_create(record: ${cls}Public, user: User) -> None:
#     """After a ${label} was created."""
#
#
# async def before_update(record_id: UUID, changes: ${cls}Update, user: User) -> None:
#     """Before a ${label} is changed; \`changes\` holds the fields sent (\`changes.model_fields_set\`)."""
#
#
# async def after_update(record: ${cls}Public, user: User) -> None:
#     """After a ${label} was changed."""
#
#
# async def before_delete(record_id: UUID, user: User) -> None:
#     """Before a ${label} is deleted."""
#
#
# async def after_delete(record_id: UUID, user: User) -> None:
#     """After a ${label} was deleted."""
#
#
# async def before_transition(record_id: UUID, state: str, user: User) -> None:
#     """Before a ${label} moves to \`state\` (only when the ${label} has a state machine)."""
#
#
# async def after_transition(record: ${cls}Public, user: User) -> None:
#     """After a ${label} moved to another state."""
`;
}

/** app/custom/: the package markers, the custom router and one hooks module per entity with routes. */
export function customModules(entities: readonly EntityIR[]): CustomModule[] {
  const owned = (path: string, body: string): CustomModule => ({ path, content: `${ownedHeader(hashHeader)}\n${body}`, owned: true });
  const marker = (path: string, doc: string): CustomModule => ({ path, content: `${hashHeader()}"""${doc}"""\n`, owned: false });
  return [
    marker("app/custom/__init__.py", "Your code: routes.py and hooks/ are yours; charter writes them once (docs/customizing.md)."),
    marker("app/custom/hooks/__init__.py", "One module of hooks per entity, yours once written (docs/customizing.md)."),
    owned("app/custom/routes.py", CUSTOM_ROUTES),
    ...entities.map((e) => owned(`app/custom/hooks/${pyModuleName(e.name)}.py`, hooksModule(e))),
  ];
}
