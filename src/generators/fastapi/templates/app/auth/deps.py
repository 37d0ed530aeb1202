"""Route dependencies: `CurrentUser` is the caller, `role_dependencies(*roles)` checks its role.

Whether authentication is on is decided once, when the settings load: with AUTH_ENABLED=false the
routes carry no bearer scheme and no role check at all, so FastAPI resolves nothing for them per request.
"""

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request, params
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app import observability
from app.auth.providers import AuthProvider
from app.config import settings
from app.errors import ApiError
from app.principal import ANONYMOUS, User

_bearer = HTTPBearer(auto_error=False)


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def get_provider(request: Request) -> AuthProvider:
    provider: AuthProvider = request.app.state.auth_provider
    return provider


async def require_auth(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    if not settings.AUTH_ENABLED:
        return ANONYMOUS
    if credentials is None or not credentials.credentials:
        raise unauthorized("a bearer token is required")
    user = await get_provider(request).authenticate(credentials.credentials)
    if user is None:
        raise unauthorized("the token is invalid or expired")
    observability.note_user(user.id)
    return user


async def anonymous() -> User:
    """The caller when AUTH_ENABLED=false: the anonymous administrator."""
    return ANONYMOUS


CurrentUser = Annotated[User, Depends(require_auth if settings.AUTH_ENABLED else anonymous)]


def require_role(*roles: str) -> Callable[[User], Awaitable[User]]:
    """A dependency passing only users whose role is one of `roles` (any role when empty)."""
    allowed = frozenset(roles)

    async def check_role(user: CurrentUser) -> User:
        if allowed and user.role not in allowed:
            raise ApiError(403, "forbidden", f"this action needs one of the roles: {', '.join(sorted(allowed))}")
        return user

    return check_role


def role_dependencies(*roles: str) -> list[params.Depends]:
    """The `dependencies=` of a route open to `roles` (any role when empty); none when auth is off."""
    return [Depends(require_role(*roles))] if settings.AUTH_ENABLED else []
