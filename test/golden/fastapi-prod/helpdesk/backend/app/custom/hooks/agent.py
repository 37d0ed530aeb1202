# Written once by charter, now yours: charter never overwrites or removes this file.

"""Hooks around the writes of agent records through the API.

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
# from app.models.agent import AgentCreate, AgentPublic, AgentUpdate
# from app.principal import User
#
#
# async def before_create(data: AgentCreate, user: User) -> None:
#     """Before a agent is created."""
#     if user.role != "admin":
#         raise Refused("only an administrator may create a agent")
#
#
# async def after_create(record: AgentPublic, user: User) -> None:
#     """After a agent was created."""
#
#
# async def before_update(record_id: UUID, changes: AgentUpdate, user: User) -> None:
#     """Before a agent is changed; `changes` holds the fields sent (`changes.model_fields_set`)."""
#
#
# async def after_update(record: AgentPublic, user: User) -> None:
#     """After a agent was changed."""
#
#
# async def before_delete(record_id: UUID, user: User) -> None:
#     """Before a agent is deleted."""
#
#
# async def after_delete(record_id: UUID, user: User) -> None:
#     """After a agent was deleted."""
#
#
# async def before_transition(record_id: UUID, state: str, user: User) -> None:
#     """Before a agent moves to `state` (only when the agent has a state machine)."""
#
#
# async def after_transition(record: AgentPublic, user: User) -> None:
#     """After a agent moved to another state."""
