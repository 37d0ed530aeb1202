"""What the route modules depend on: the caller (`CurrentUser`), role checks and the repositories.

Each is a FastAPI dependency, so a test (or a custom route) can swap it without touching the
handlers: `app.dependency_overrides[ticket_repository] = lambda: FakeRepository()` (one
`<entity>_repository` per entity, below).
"""

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends

# charter: if auth
from app.auth.deps import CurrentUser, role_dependencies
# charter: else
from app.principal import ANONYMOUS, User
# charter: end
from app.repositories.base import Repository

if TYPE_CHECKING:
    from fastapi import FastAPI

# charter: if auth
# Re-exported: the route modules import everything they depend on from here.
__all__ = ["CurrentUser", "role_dependencies"]
# charter: else


async def current_user() -> User:
    """The domain has no auth contract: every request is the anonymous administrator."""
    return ANONYMOUS


CurrentUser = Annotated[User, Depends(current_user)]
# charter: end


class AppOverrides:
    """The app's `dependency_overrides`, for the routes of the generated route modules.

    The app serves those routes as its own (app/main.py) instead of including their routers, and a
    route made by an APIRouter reads overrides from the provider its router was made with: this one
    hands it the app's, so `app.dependency_overrides[...]` swaps a dependency of every route.
    """

    app: "FastAPI | None" = None

    @property
    def dependency_overrides(self) -> dict[Callable[..., Any], Callable[..., Any]]:
        return self.app.dependency_overrides if self.app is not None else {}


APP_OVERRIDES = AppOverrides()

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
