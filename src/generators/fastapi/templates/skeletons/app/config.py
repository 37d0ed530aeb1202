"""Settings of the __domain__ application, read from the environment (and a .env file)."""

import os
import sys
import warnings
from datetime import UTC, datetime
from typing import Literal, NoReturn

import orjson
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

# The APP_ENV values under which answers are checked against their response models by default.
CHECKED_ENVS = ("development", "test")
# charter: if auth
PLACEHOLDER_SECRET = "change-me"
# The one APP_ENV value under which a weak secret (the placeholder, empty or short) is tolerated,
# with a warning, and the contract's bootstrap users are seeded unasked. Any other value, and an
# unset APP_ENV, count as production: the guards fail closed.
DEVELOPMENT_ENV = "development"
# HS256 keys shorter than its 256-bit output can be brute-forced offline from one token.
MIN_SECRET_BYTES = 32
# charter: end


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    APP_ENV: str = "production"
    DATABASE_URL: str = "postgresql://app:app@localhost:5432/app"
    DATABASE_BACKEND: Literal["postgres", "memory"] = "postgres"
    DATABASE_POOL_SIZE: int = 10
    # How long a request waits for a connection while all DATABASE_POOL_SIZE are busy; past it, the
    # request is answered 503 with Retry-After rather than queueing without end.
    DATABASE_POOL_TIMEOUT_SECONDS: float = Field(default=5.0, gt=0)
    # auto: apply db/ (migrations, then schema.sql) on start, under an advisory lock so replicas
    # starting together run it once. off: only check; while tables are missing every request,
    # /health included, answers 503 naming `python -m app.migrate`.
    DATABASE_MIGRATE: Literal["auto", "off"] = "off"
    # Creates of one entity that arrive while another is being written go together, by one
    # multi-row INSERT (app/repositories/batches.py); false: each by an INSERT of its own.
    DATABASE_BATCH_CREATES: bool = True
    PORT: int = 8000
    CORS_ORIGINS: str = "*"
    # Requests with a larger body are refused with 413.
    MAX_BODY_BYTES: int = 1_048_576
    # How long the first response of a create sent with an Idempotency-Key answers its repeats.
    IDEMPOTENCY_TTL_SECONDS: int = Field(default=86_400, ge=1)
    # on: every JSON answer is checked against the response model its route declares (a mismatch
    # is a 500, reported to the Healer); off: answers go out as the handlers built them (see
    # app/responses.py); auto: on under APP_ENV=development or test, off otherwise.
    RESPONSE_VALIDATION: Literal["auto", "on", "off"] = "auto"
    # The garbage collector's thresholds once start-up is done (app/main.py settle_gc), as JSON:
    # GC_THRESHOLDS=[50000,20,100]. The first is the net allocations between two young collections;
    # [700,10,10] restores Python's defaults.
    GC_THRESHOLDS: tuple[int, int, int] = (50_000, 20, 100)
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
    # Seeds the auth contract's bootstrap users (with the contract's passwords) on start; unset,
    # only APP_ENV=development seeds them.
    AUTH_SEED_USERS: bool | None = None
    # The proxies (addresses, networks or host names, comma-separated) whose X-Forwarded-For names
    # the client for the login throttle; default none: every caller is its own client.
    TRUSTED_PROXIES: str = ""
    # charter: else
    AUTH_ENABLED: bool = False
    # charter: end
    SVC_HEALER_URL: str | None = None
    # Sent as a bearer token with every error report when set (the Healer's SVC_HEALER_TOKEN).
    SVC_HEALER_TOKEN: str | None = None
    # Log lines: `json` (one object a line, for collectors) or `text` (for a person; `charter dev`).
    LOG_FORMAT: Literal["json", "text"] = "json"
    LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "debug", "info", "warning", "error"] = "INFO"
    # One line per request: method, route, status, duration, user id.
    LOG_REQUESTS: bool = True
    # GET /metrics in Prometheus' format; with METRICS_TOKEN, only for that bearer token; with
    # METRICS_PORT, on that port (of METRICS_HOST) instead of the app's.
    METRICS_ENABLED: bool = True
    METRICS_TOKEN: str | None = None
    METRICS_PORT: int | None = Field(default=None, ge=1, le=65535)
    METRICS_HOST: str = "0.0.0.0"

    # charter: if auth
    @property
    def seed_users(self) -> bool:
        if self.AUTH_SEED_USERS is not None:
            return self.AUTH_SEED_USERS
        return self.APP_ENV.lower() == DEVELOPMENT_ENV

    # charter: end
    @property
    def validate_responses(self) -> bool:
        if self.RESPONSE_VALIDATION == "auto":
            return self.APP_ENV.lower() in CHECKED_ENVS
        return self.RESPONSE_VALIDATION == "on"

    @property
    def cors_origins(self) -> list[str]:
        return [origin.strip() for origin in self.CORS_ORIGINS.split(",") if origin.strip()]


def refuse(reason: str) -> NoReturn:
    """Ends the process before it serves anything, with the reason as its last line on stderr: a JSON
    log line like every other (a log pipeline reads stderr whole), or the plain reason under
    LOG_FORMAT=text. Read from the environment: the settings that say how to log may be what is
    refused. No traceback: a configuration error is no bug."""
    if os.environ.get("LOG_FORMAT", "").strip().lower() == "text":
        raise SystemExit(reason)
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    line = {"timestamp": now, "level": "critical", "logger": "app.config", "message": reason}
    sys.stderr.write(orjson.dumps(line).decode() + "\n")
    sys.stderr.flush()
    raise SystemExit(1)


# charter: if auth
def check_secret(loaded: Settings) -> None:
    """Refuses a weak secret (placeholder, empty, under 32 bytes) outside development: tokens could be forged."""
    secret = loaded.AUTH_SECRET.strip()
    if not (loaded.AUTH_ENABLED and loaded.AUTH_PROVIDER == "jwt"):
        return
    if secret == PLACEHOLDER_SECRET:
        what = "still has its placeholder value"
    elif not secret:
        what = "is empty"
    elif len(secret.encode()) < MIN_SECRET_BYTES:
        what = f"is shorter than {MIN_SECRET_BYTES} bytes"
    else:
        return
    if loaded.APP_ENV.lower() != DEVELOPMENT_ENV:
        refuse(
            f"refusing to start: AUTH_SECRET {what}; set {MIN_SECRET_BYTES} or more random bytes, e.g. "
            f"openssl rand -hex 32 (APP_ENV={loaded.APP_ENV}; only an explicit APP_ENV=development accepts it)"
        )
    warnings.warn(
        f"AUTH_SECRET {what}: anyone can forge tokens (refused outside APP_ENV=development)",
        stacklevel=2,
    )


# charter: end
# The warnings raised while the settings load, before logging is set up: app/observability.py logs
# them once it is, as the log lines they would have been (raw text on stderr otherwise).
LOAD_WARNINGS: list[warnings.WarningMessage] = []


def load_settings() -> Settings:
    """The settings, or an exit with a one-line reason (a configuration error is no bug: no traceback)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            loaded = Settings()
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            refuse(f"invalid settings: {problems}")
        # charter: if auth
        check_secret(loaded)
        # charter: end
    LOAD_WARNINGS.extend(caught)
    return loaded


settings = load_settings()
