"""The client address of a request: its peer, or what a trusted proxy says the client was.

Only peers named in TRUSTED_PROXIES (addresses, networks or host names such as compose's
`frontend`, looked up again every minute so a recreated container keeps its trust) may name the
client, through the last X-Forwarded-For entry: the one that proxy wrote. Anyone else's header is
ignored, so a direct caller cannot pick a new address for every login attempt. uvicorn runs with
--no-proxy-headers, so the peer here is the real one.
"""

import ipaddress
import logging
import socket
import time

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from app.config import settings

logger = logging.getLogger("app.auth")

_LOOKUP_EVERY_SECONDS = 60.0

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    def __init__(self, spec: str) -> None:
        self._networks: list[Network] = []
        self._names: list[str] = []
        for entry in (e.strip() for e in spec.split(",")):
            if not entry:
                continue
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self._names.append(entry)
        self._resolved: set[str] = set()
        self._resolved_at = -_LOOKUP_EVERY_SECONDS

    def _lookup(self) -> set[str]:
        found: set[str] = set()
        for name in self._names:
            try:
                found.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
            except OSError as exc:
                logger.warning("TRUSTED_PROXIES: cannot resolve %s: %s", name, exc)
        return found

    async def trusts(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if any(address in network for network in self._networks):
            return True
        if not self._names:
            return False
        if time.monotonic() - self._resolved_at >= _LOOKUP_EVERY_SECONDS:
            self._resolved = await run_in_threadpool(self._lookup)
            self._resolved_at = time.monotonic()
        return host in self._resolved


_trusted = TrustedProxies(settings.TRUSTED_PROXIES)


async def client_address(request: Request) -> str:
    peer = request.client.host if request.client is not None else "unknown"
    forwarded = request.headers.get("x-forwarded-for")
    if forwarded and await _trusted.trusts(peer):
        last = forwarded.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            return peer
    return peer
