"""Settings of the __domain__ application, read from the environment (and a .env file)."""

# charter: if auth
import warnings
# charter: end
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

# charter: if auth
PLACEHOLDER_SECRET = "change-me"
# The one APP_ENV value under which the placeholder (or an empty) secret is tolerated, with a
# warning. Any other value, and an unset APP_ENV, count as production: the guard fails closed.
DEVELOPMENT_ENV = "development"
# charter: end


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    APP_ENV: str = "production"
    DATABASE_URL: str = "postgresql://app:app@localhost:5432/app"
    DATABASE_BACKEND: Literal["postgres", "memory"] = "postgres"
    DATABASE_POOL_SIZE: int = 10
    PORT: int = 8000
    CORS_ORIGINS: str = "*"
    # Requests with a larger body are refused with 413.
    MAX_BODY_BYTES: int = 1_048_576
    # How long the first response of a create sent with an Idempotency-Key answers its repeats.
    IDEMPOTENCY_TTL_SECONDS: int = Field(default=86_400, ge=1)
    # charter: if auth
    AUTH_ENABLED: bool = True
    AUTH_PROVIDER: Literal["jwt", "external"] = "jwt"
    AUTH_SECRET: str = PLACEHOLDER_SECRET
    AUTH_TOKEN_EXPIRE_MINUTES: int = 60
    # Issuer of our own tokens (default: the domain name), or the one external tokens must carry.
    AUTH_ISSUER: str | None = None
    AUTH_AUDIENCE: str | None = None
    AUTH_JWKS_URL: str | None = None
    AUTH_ROLE_CLAIM: str = "role"
    # Passwordless login (id or email only) for local development.
    AUTH_DEV_LOGIN: bool = False
    # Failed logins tolerated per account and per client address within the window; past either,
    # POST /auth/login answers 429 with Retry-After until the oldest failure leaves the window.
    # Counted per process (each uvicorn worker counts its own); 0 turns a limit off.
    AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT: int = Field(default=5, ge=0)
    AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS: int = Field(default=20, ge=0)
    AUTH_LOGIN_WINDOW_SECONDS: int = Field(default=900, ge=1)
    # charter: else
    AUTH_ENABLED: bool = False
    # charter: end
    SVC_HEALER_URL: str | None = None
    # Sent as a bearer token with every error report when set (the Healer's SVC_HEALER_TOKEN).
    SVC_HEALER_TOKEN: str | None = None

    @property
    def cors_origins(self) -> list[str]:
        return [origin.strip() for origin in self.CORS_ORIGINS.split(",") if origin.strip()]


# charter: if auth
def check_secret(loaded: Settings) -> None:
    """Refuses the placeholder (or an empty) secret outside development: anyone could forge tokens."""
    secret = loaded.AUTH_SECRET.strip()
    if not (loaded.AUTH_ENABLED and loaded.AUTH_PROVIDER == "jwt" and secret in ("", PLACEHOLDER_SECRET)):
        return
    what = "has its placeholder value" if secret else "is empty"
    if loaded.APP_ENV.lower() != DEVELOPMENT_ENV:
        raise SystemExit(
            f"refusing to start: AUTH_SECRET {'still ' if secret else ''}{what}; set a real secret "
            f"(APP_ENV={loaded.APP_ENV}; only an explicit APP_ENV=development accepts it)"
        )
    warnings.warn(
        f"AUTH_SECRET {what}: anyone can forge tokens (refused outside APP_ENV=development)",
        stacklevel=2,
    )


# charter: end
def load_settings() -> Settings:
    """The settings, or an exit with a one-line reason (a configuration error is no bug: no traceback)."""
    try:
        loaded = Settings()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SystemExit(f"invalid settings: {problems}") from None
    # charter: if auth
    check_secret(loaded)
    # charter: end
    return loaded


settings = load_settings()
