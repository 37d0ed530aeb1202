"""POST /auth/login, POST /auth/refresh and GET /auth/me."""

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from app.auth.clients import client_address
from app.auth.deps import CurrentUser, get_provider, unauthorized
from app.auth.limits import LoginLimits
from app.auth.passwords import DUMMY_HASH, verify_password
from app.auth.users import UserStore
from app.config import settings
from app.errors import ApiError, error_responses
from app.fieldtypes import Text
from app.principal import User
from app.responses import ORJSONResponse

router = APIRouter(prefix="/auth", tags=["auth"], default_response_class=ORJSONResponse)

_bearer = HTTPBearer(auto_error=False)

_limits = LoginLimits(
    settings.AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT,
    settings.AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS,
    settings.AUTH_LOGIN_WINDOW_SECONDS,
)


class LoginRequest(BaseModel):
    # An email or an id is needed: the document says so, as the handler does.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["email"], "properties": {"email": {"type": "string"}}},
                {"required": ["id"], "properties": {"id": {"type": "string"}}},
            ]
        },
    )

    id: Text | None = None
    email: Text | None = None
    # Accepted for compatibility; the role in the token is always the stored one.
    role: Text | None = None
    password: Text | None = None


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_in: int


def _token(request: Request, user: User, password_hash: str | None) -> Token:
    provider = get_provider(request)
    return Token(
        access_token=provider.create_token(user, password_hash), expires_in=settings.AUTH_TOKEN_EXPIRE_MINUTES * 60
    )


# 429 (with Retry-After) when the login attempts of the account or the address are throttled.
@router.post("/login", operation_id="auth-login", responses=error_responses(400, 401, 404, 413, 415, 422, 429, 500))
async def login(body: LoginRequest, request: Request) -> Token:
    if settings.AUTH_PROVIDER != "jwt":
        raise ApiError(404, "not_found", "log in with the external identity provider")
    if body.email is None and body.id is None:
        raise ApiError(422, "validation_error", "give an email (or id) and a password")
    address = await client_address(request)
    store: UserStore = request.app.state.user_store
    stored = await store.find(body.id, body.email)
    # Counted per account, whichever identifier was typed (an email locked out stays locked out
    # by id); an unknown identifier is counted as typed, emails case-insensitively.
    if stored is not None:
        account = f"user:{stored.id}"
    else:
        account = f"email:{body.email.lower()}" if body.email is not None else f"id:{body.id}"
    _limits.check(account, address)
    if body.password is None:
        # Passwordless login exists for local development only.
        valid = settings.AUTH_DEV_LOGIN and stored is not None
    else:
        valid = await run_in_threadpool(verify_password, body.password, stored.password_hash if stored else DUMMY_HASH)
    if stored is None or not valid:
        _limits.failed(account, address)
        raise unauthorized("invalid credentials")
    _limits.succeeded(account)
    return _token(request, User(id=stored.id, email=stored.email, role=stored.role), stored.password_hash)


@router.post("/refresh", operation_id="auth-refresh", responses=error_responses(401, 413, 415, 500))
async def refresh(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Token:
    if credentials is None:
        raise unauthorized("a bearer token is required")
    token = await get_provider(request).refresh_token(credentials.credentials, request.app.state.user_store)
    if token is None:
        raise unauthorized("the token is invalid or expired, or its user was removed, changed role or password")
    return Token(access_token=token, expires_in=settings.AUTH_TOKEN_EXPIRE_MINUTES * 60)


@router.get("/me", operation_id="auth-me", responses=error_responses(401, 500))
async def me(user: CurrentUser) -> User:
    return user
