"""Token providers: `jwt` signs its own HS256 tokens, `external` checks an identity provider's."""

import hashlib
import hmac
import logging
from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta

import jwt
from jwt.types import Options
from starlette.concurrency import run_in_threadpool

from app.auth.users import UserStore
from app.principal import User

logger = logging.getLogger("app.auth")


class AuthProvider(ABC):
    @abstractmethod
    async def authenticate(self, token: str) -> User | None:
        """The user a token stands for, or None when it is missing, expired, tampered or foreign."""

    @abstractmethod
    def create_token(self, user: User, password_hash: str | None = None) -> str: ...

    @abstractmethod
    async def refresh_token(self, token: str, store: UserStore) -> str | None: ...


class JwtProvider(AuthProvider):
    """HS256 tokens signed with AUTH_SECRET; claims sub, email, role, iat, exp, iss and pwd."""

    algorithm = "HS256"

    def __init__(self, secret: str, expire_minutes: int, issuer: str) -> None:
        self._secret = secret
        self.expire_minutes = expire_minutes
        self._issuer = issuer

    def password_stamp(self, password_hash: str | None) -> str:
        """A keyed digest of the stored password hash: a password change makes older tokens unrefreshable."""
        digest = hmac.new(self._secret.encode(), (password_hash or "").encode(), hashlib.sha256)
        return digest.hexdigest()[:32]

    def create_token(self, user: User, password_hash: str | None = None) -> str:
        now = datetime.now(UTC)
        claims = {
            "sub": user.id,
            "email": user.email,
            "role": user.role,
            "iat": now,
            "exp": now + timedelta(minutes=self.expire_minutes),
            "iss": self._issuer,
            "pwd": self.password_stamp(password_hash),
        }
        return jwt.encode(claims, self._secret, algorithm=self.algorithm)

    def _claims(self, token: str) -> dict[str, object] | None:
        try:
            return jwt.decode(
                token,
                self._secret,
                algorithms=[self.algorithm],
                issuer=self._issuer,
                options={"require": ["sub", "role", "exp", "iat", "iss"]},
            )
        except jwt.PyJWTError:
            return None

    async def authenticate(self, token: str) -> User | None:
        claims = self._claims(token)
        if claims is None:
            return None
        return User(id=str(claims["sub"]), email=str(claims.get("email", "")), role=str(claims["role"]))

    async def refresh_token(self, token: str, store: UserStore) -> str | None:
        """A new token only while the user still exists with the same role and password as when signed in."""
        claims = self._claims(token)
        if claims is None:
            return None
        stored = await store.find(str(claims["sub"]), None)
        if (
            stored is None
            or stored.role != claims["role"]
            or not hmac.compare_digest(self.password_stamp(stored.password_hash), str(claims.get("pwd", "")))
        ):
            return None
        return self.create_token(User(id=stored.id, email=stored.email, role=stored.role), stored.password_hash)


class TokenIssuingUnsupported(RuntimeError):
    """The provider verifies tokens but does not issue them (the identity provider does)."""


class ExternalProvider(AuthProvider):
    """RS256/ES256 tokens of an external identity provider, checked against its JWKS."""

    algorithms = ("RS256", "ES256")

    def __init__(self, jwks_url: str, issuer: str | None, audience: str | None, role_claim: str) -> None:
        self._jwks = jwt.PyJWKClient(jwks_url, cache_keys=True)
        self._issuer = issuer
        self._audience = audience
        self._role_claim = role_claim

    def create_token(self, user: User, password_hash: str | None = None) -> str:
        # No login route is mounted for this provider; reaching here is a wiring mistake.
        raise TokenIssuingUnsupported("tokens are issued by the external identity provider")

    async def authenticate(self, token: str) -> User | None:
        try:
            # PyJWKClient fetches over blocking HTTP (then caches): keep it off the event loop.
            key = await run_in_threadpool(self._jwks.get_signing_key_from_jwt, token)
        except (jwt.PyJWKClientConnectionError, OSError) as exc:
            logger.warning("could not fetch the JWK set: %s", exc)
            return None
        except (jwt.PyJWTError, ValueError):
            # A malformed token, a kid the set does not have, or a set that is not JSON.
            return None
        options: Options = {"require": ["sub", "exp"], "verify_aud": self._audience is not None}
        try:
            # The PyJWK, not its raw key: decode then refuses a token whose alg is not the key's own
            # (an ES256 header on an RSA key), instead of failing inside the signature check.
            claims = jwt.decode(
                token,
                key,
                algorithms=list(self.algorithms),
                issuer=self._issuer,
                audience=self._audience,
                options=options,
            )
        except jwt.PyJWTError:
            return None
        role = claims.get(self._role_claim)
        if isinstance(role, list):
            role = role[0] if role else None
        if not isinstance(role, str):
            return None
        return User(id=str(claims["sub"]), email=str(claims.get("email", "")), role=role)

    async def refresh_token(self, token: str, store: UserStore) -> str | None:
        return None
