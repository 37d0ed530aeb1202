"""Starts authentication: the token provider and the seeded user store."""

from app.auth.bootstrap import BOOTSTRAP_USERS
from app.auth.providers import AuthProvider, ExternalProvider, JwtProvider
from app.auth.users import MemoryUserStore, PostgresUserStore, UserStore, seed
from app.config import settings
from app.domain import DOMAIN
from app.pool import ConnectionPool


def make_provider() -> AuthProvider:
    if settings.AUTH_PROVIDER == "external":
        if not settings.AUTH_JWKS_URL:
            raise RuntimeError("AUTH_PROVIDER=external needs AUTH_JWKS_URL")
        return ExternalProvider(
            settings.AUTH_JWKS_URL,
            settings.AUTH_ISSUER or None,
            settings.AUTH_AUDIENCE,
            settings.AUTH_ROLE_CLAIM,
        )
    # Our own tokens name the domain as issuer unless AUTH_ISSUER says otherwise.
    return JwtProvider(settings.AUTH_SECRET, settings.AUTH_TOKEN_EXPIRE_MINUTES, settings.AUTH_ISSUER or DOMAIN)


async def make_user_store(pool: ConnectionPool | None) -> UserStore:
    store: UserStore = PostgresUserStore(pool) if pool is not None else MemoryUserStore()
    # The contract's passwords are known to everyone who can read it: seeded only where asked for.
    if settings.seed_users:
        await seed(store, BOOTSTRAP_USERS)
    return store
