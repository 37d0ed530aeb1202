"""What the route modules depend on: the caller (`CurrentUser`), role checks and the repositories.

Each is a FastAPI dependency, so a test (or a custom route) can swap it without touching the
handlers: `app.dependency_overrides[ticket_repository] = lambda: FakeRepository()` (one
`<entity>_repository` per entity, below).
"""

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends

# charter: if auth
from app.auth.deps import CurrentUser, role_dependencies
# charter: else
from app.principal import ANONYMOUS, User
# charter: end
from app.repositories.base import Repository

# charter: if auth
# Re-exported: the route modules import everything they depend on from here.
__all__ = ["CurrentUser", "role_dependencies"]
# charter: else


async def current_user() -> User:
    """The domain has no auth contract: every request is the anonymous administrator."""
    return ANONYMOUS


CurrentUser = Annotated[User, Depends(current_user)]
# charter: end


# The repositories of the open storage by entity name, set by the lifespan (app/main.py).
_repositories: dict[str, Repository] = {}


def use_repositories(repositories: Mapping[str, Repository]) -> None:
    _repositories.clear()
    _repositories.update(repositories)


class RepositoryOf:
    """The dependency that hands a route its entity's repository.

    An async callable, so FastAPI calls it on the event loop (a plain function would go through the
    thread pool on every request); one instance per entity, so each can be overridden on its own.
    """

    def __init__(self, entity: str) -> None:
        self.entity = entity

    async def __call__(self) -> Repository:
        return _repositories[self.entity]
