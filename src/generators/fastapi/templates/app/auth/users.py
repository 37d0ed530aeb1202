"""The users who can log in: seeded from the auth contract's bootstrap users on start."""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from app.auth.passwords import hash_password
from app.pool import ConnectionPool


@dataclass(frozen=True, slots=True)
class StoredUser:
    id: str
    email: str
    role: str
    password_hash: str | None


@dataclass(frozen=True, slots=True)
class BootstrapUser:
    id: str
    email: str
    role: str
    password: str | None


class UserStore(ABC):
    @abstractmethod
    async def find(self, user_id: str | None, email: str | None) -> StoredUser | None: ...

    @abstractmethod
    async def missing(self, ids: Sequence[str]) -> set[str]: ...

    @abstractmethod
    async def add(self, user: StoredUser) -> None: ...


class MemoryUserStore(UserStore):
    def __init__(self) -> None:
        self._users: dict[str, StoredUser] = {}

    async def find(self, user_id: str | None, email: str | None) -> StoredUser | None:
        for user in self._users.values():
            if (email is not None and user.email.lower() == email.lower()) or (email is None and user.id == user_id):
                return user
        return None

    async def missing(self, ids: Sequence[str]) -> set[str]:
        return {i for i in ids if i not in self._users}

    async def add(self, user: StoredUser) -> None:
        self._users.setdefault(user.id, user)


class PostgresUserStore(UserStore):
    """The `auth_users` table (created by schema.sql)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    async def find(self, user_id: str | None, email: str | None) -> StoredUser | None:
        if email is not None:
            row = await self._pool.fetchrow(
                "SELECT id, email, role, password_hash FROM auth_users WHERE lower(email) = lower($1)", email
            )
        else:
            row = await self._pool.fetchrow(
                "SELECT id, email, role, password_hash FROM auth_users WHERE id = $1", user_id
            )
        return StoredUser(**dict(row)) if row is not None else None

    async def missing(self, ids: Sequence[str]) -> set[str]:
        rows = await self._pool.fetch("SELECT id FROM auth_users WHERE id = ANY($1::text[])", list(ids))
        return set(ids) - {row["id"] for row in rows}

    async def add(self, user: StoredUser) -> None:
        await self._pool.execute(
            "INSERT INTO auth_users (id, email, role, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            user.id,
            user.email,
            user.role,
            user.password_hash,
        )


async def seed(store: UserStore, users: Sequence[BootstrapUser]) -> None:
    """Inserts the bootstrap users that are missing, hashing their passwords (first start only)."""
    missing = await store.missing([u.id for u in users])
    for user in users:
        if user.id not in missing:
            continue
        password_hash = await run_in_threadpool(hash_password, user.password) if user.password else None
        await store.add(StoredUser(id=user.id, email=user.email, role=user.role, password_hash=password_hash))
