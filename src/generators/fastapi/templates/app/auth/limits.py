"""Login throttling: failed attempts counted per account and per client address.

Past AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT failures for one account, or
AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS failures from one address, within AUTH_LOGIN_WINDOW_SECONDS,
POST /auth/login answers 429 with Retry-After, before any password is checked. Only failures count:
people who log in successfully are never throttled, and a success clears its account's failures.
The counts live in the process (a sliding window of failure times per key).
"""

import math
import time
from collections import deque
from collections.abc import Callable

from app.errors import ApiError

# Past this many keys, keys whose failures all left the window are dropped (bounded memory when
# many accounts or addresses are tried).
_SWEEP_ABOVE = 10_000


class FailureWindow:
    """Failure times per key within a sliding window of `window` seconds, at most `limit` each."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}

    def retry_after(self, key: str) -> int | None:
        """Seconds until `key` may try again, or None when it may now."""
        if self.limit <= 0:
            return None
        times = self._failures.get(key)
        if times is None:
            return None
        now = self._clock()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[key]
            return None
        if len(times) < self.limit:
            return None
        return max(1, math.ceil(times[0] + self.window - now))

    def fail(self, key: str) -> None:
        if self.limit <= 0:
            return
        if len(self._failures) > _SWEEP_ABOVE:
            self._sweep()
        self._failures.setdefault(key, deque(maxlen=self.limit)).append(self._clock())

    def clear(self, key: str) -> None:
        self._failures.pop(key, None)

    def _sweep(self) -> None:
        horizon = self._clock() - self.window
        for key in [k for k, times in self._failures.items() if not times or times[-1] <= horizon]:
            del self._failures[key]


class LoginLimits:
    """The two windows of the login endpoint: per account (email or id) and per client address."""

    def __init__(self, per_account: int, per_address: int, window: float) -> None:
        self.accounts = FailureWindow(per_account, window)
        self.addresses = FailureWindow(per_address, window)

    def check(self, account: str, address: str) -> None:
        """Raises 429 while the account or the address is over its limit."""
        waits = [w for w in (self.accounts.retry_after(account), self.addresses.retry_after(address)) if w]
        if waits:
            wait = max(waits)
            raise ApiError(
                429,
                "too_many_requests",
                f"too many failed login attempts; retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, account: str, address: str) -> None:
        self.accounts.fail(account)
        self.addresses.fail(address)

    def succeeded(self, account: str) -> None:
        self.accounts.clear(account)
