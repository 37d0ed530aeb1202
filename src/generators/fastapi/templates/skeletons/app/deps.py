"""What the route modules depend on: the caller (`CurrentUser`), role checks and the repositories."""

from collections.abc import Mapping
# charter: if not auth
from typing import Annotated

from fastapi import Depends
# charter: end

# charter: if auth
from app.auth.deps import CurrentUser, role_dependencies
# charter: else
from app.principal import ANONYMOUS, User
# charter: end
from app.repositories.base import Repository

# charter: if auth
__all__ = ["CurrentUser", "repository", "role_dependencies", "use_repositories"]
# charter: else


async def current_user() -> User:
    """The domain has no auth contract: every request is the anonymous administrator."""
    return ANONYMOUS


CurrentUser = Annotated[User, Depends(current_user)]
# charter: end

# The repositories of the open storage by entity name, set by the lifespan (app/main.py). A route
# looks its own up with repository() rather than through Depends(): one dependency fewer for
# FastAPI to solve on every request, and the storage is the same for the whole process anyway.
_repositories: dict[str, Repository] = {}


def use_repositories(repositories: Mapping[str, Repository]) -> None:
    _repositories.clear()
    _repositories.update(repositories)


def repository(entity: str) -> Repository:
    return _repositories[entity]
