"""Route dependencies: `require_auth` yields the caller, `require_role(*roles)` checks its role."""

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

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
    return user


CurrentUser = Annotated[User, Depends(require_auth)]


def require_role(*roles: str) -> Callable[[User], Awaitable[User]]:
    """A dependency passing only users whose role is one of `roles` (any role when empty)."""
    allowed = frozenset(roles)

    async def check_role(user: CurrentUser) -> User:
        if allowed and user.role not in allowed:
            raise ApiError(403, "forbidden", f"this action needs one of the roles: {', '.join(sorted(allowed))}")
        return user

    return check_role
