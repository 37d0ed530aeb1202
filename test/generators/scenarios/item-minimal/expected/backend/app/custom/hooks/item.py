# Written once by charter, now yours: charter never overwrites or removes this file.

"""Hooks around the writes of item records through the API.

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
# from app.models.item import ItemCreate, ItemPublic, ItemUpdate
# from app.principal import User
#
#
# async def before_create(data: ItemCreate, user: User) -> None:
#     """Before a item is created."""
#     if user.role != "admin":
#         raise Refused("only an administrator may create a item")
#
#
# async def after_create(record: ItemPublic, user: User) -> None:
#     """After a item was created."""
#
#
# async def before_update(record_id: UUID, changes: ItemUpdate, user: User) -> None:
#     """Before a item is changed; `changes` holds the fields sent (`changes.model_fields_set`)."""
#
#
# async def after_update(record: ItemPublic, user: User) -> None:
#     """After a item was changed."""
#
#
# async def before_delete(record_id: UUID, user: User) -> None:
#     """Before a item is deleted."""
#
#
# async def after_delete(record_id: UUID, user: User) -> None:
#     """After a item was deleted."""
#
#
# async def before_transition(record_id: UUID, state: str, user: User) -> None:
#     """Before a item moves to `state` (only when the item has a state machine)."""
#
#
# async def after_transition(record: ItemPublic, user: User) -> None:
#     """After a item moved to another state."""
