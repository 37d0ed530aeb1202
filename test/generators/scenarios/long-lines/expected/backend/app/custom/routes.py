# Written once by charter, now yours: charter never overwrites or removes this file.

"""Your own endpoints: app/main.py includes this router after the generated ones.

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
