"""The outbound guard (contract §12 "Outbound destinations"): every request the server makes on a
user's behalf — Slack webhooks, CalDAV, outbound webhooks — goes through here.

- Only public addresses are reached. Loopback, private (RFC 1918, 100.64/10, fc00::/7),
  link-local (169.254/16 — cloud metadata — and fe80::/10), unspecified, multicast and other
  reserved addresses are refused, also when wrapped in IPv6 (`::ffff:127.0.0.1`, 6to4, NAT64)
  or spelled oddly (`127.1`, `0x7f000001`, `2130706433`: the resolver reads them as 127.0.0.1,
  and the resolver's answer is what is checked).
- The check is made on the address actually connected to: the host is resolved here, EVERY
  resolved address must be allowed, and the connection goes to the checked address (TLS still
  verifies the host name). It happens at each connection, so each redirect hop is checked too.
- `SALESPLAN_OUTBOUND_ALLOW` (comma-separated CIDRs) re-allows ranges; link-local, unspecified
  and multicast never. Default: empty, except when the public URL's host is loopback (a trial or
  test server), where 127.0.0.0/8 and ::1 are allowed.
- Errors name no internal detail: a refused destination is "destination not allowed", every
  network failure "could not connect to the server".
- Blocking clients (CalDAV on `requests`) run on a bounded pool of their own (`run_blocking`),
  each request with a deadline, so a slow server cannot hold the default executor or another
  organization's work.

Two clients are provided: `async_client` (httpx, a guarded httpcore network backend) and
`guard_session` (requests, a guarded urllib3 connection class mounted on the session).

Here: the save-time check and the httpx client. The rule (which addresses, the errors) is
`kit.outbound_policy`; the requests client and the pool `kit.outbound_blocking`. Every name is
importable from here.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import certifi
import httpcore
import httpx

from salesplan.errors import Unprocessable
from salesplan.kit.outbound_blocking import (
    PER_KEY_CALLS,
    POOL_THREADS,
    GuardedAdapter,
    GuardedHTTPConnection,
    GuardedHTTPSConnection,
    _Call,
    _local,
    deadline,
    guard_session,
    run_blocking,
)
from salesplan.kit.outbound_policy import (
    LOOPBACK_NETWORKS,
    NAT64,
    NEVER,
    REFUSED,
    SHARED_ADDRESS_SPACE,
    TIMEOUT_SECONDS,
    UNREACHABLE,
    DestinationNotAllowed,
    IPAddress,
    IPNetwork,
    OutboundError,
    OutboundPolicy,
    Unreachable,
    classify,
    parse_ip,
    parse_networks,
    policy,
    unwrap,
)

__all__ = [
    "LOOPBACK_NETWORKS",
    "NAT64",
    "NEVER",
    "PER_KEY_CALLS",
    "POOL_THREADS",
    "REFUSED",
    "SAVE_CHECK_DNS_SECONDS",
    "SHARED_ADDRESS_SPACE",
    "TIMEOUT_SECONDS",
    "UNREACHABLE",
    "DestinationNotAllowed",
    "GuardedAdapter",
    "GuardedHTTPConnection",
    "GuardedHTTPSConnection",
    "GuardedTransport",
    "IPAddress",
    "IPNetwork",
    "OutboundError",
    "OutboundPolicy",
    "Unreachable",
    "_Call",
    "_local",
    "async_client",
    "classify",
    "deadline",
    "guard_session",
    "parse_ip",
    "parse_networks",
    "policy",
    "refused_at_save",
    "require_allowed",
    "run_blocking",
    "unwrap",
]

# How long a save-time check waits for DNS before leaving the decision to use time.
SAVE_CHECK_DNS_SECONDS = 5.0


# -- save-time check -------------------------------------------------------------------------

_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")


async def refused_at_save(pol: OutboundPolicy, url: str) -> bool:
    """Whether `url` is known to be refused already now: a literal address or a host name that
    resolves to one. A name that does not resolve now is left to use time."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    if not host:
        return False
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(
            loop.run_in_executor(_resolver, pol.resolve, host, port), SAVE_CHECK_DNS_SECONDS
        )
    except DestinationNotAllowed:
        return True
    except (TimeoutError, OutboundError):
        return False
    return False


async def require_allowed(pol: OutboundPolicy, url: str, field: str | None = None) -> None:
    """At save time: 422 `unprocessable`, `details.reason: destination_not_allowed`."""
    if await refused_at_save(pol, url):
        details: dict[str, object] = {"reason": "destination_not_allowed"}
        if field:
            details["field"] = field
        raise Unprocessable(
            "The destination is not allowed: outbound requests go only to public addresses.",
            details=details,
        )


# -- httpx -----------------------------------------------------------------------------------

# httpx logs each request's full URL at INFO: a Slack webhook URL is a credential.
logging.getLogger("httpx").setLevel(logging.WARNING)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, pol: OutboundPolicy) -> None:
        self._policy = pol
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if parse_ip(host) is not None:
            addresses = self._policy.resolve(host, port)
        else:
            loop = asyncio.get_running_loop()
            resolving = loop.run_in_executor(_resolver, self._policy.resolve, host, port)
            try:
                addresses = await asyncio.wait_for(resolving, timeout or TIMEOUT_SECONDS)
            except TimeoutError:
                raise Unreachable() from None
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise DestinationNotAllowed()

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=certifi.where())


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with the guarded backend (no proxies: they would be the peer)."""

    def __init__(self, pol: OutboundPolicy) -> None:
        # Not super().__init__(): it would build a pool (and an SSL context) only to drop it;
        # the transport's methods use nothing but `_pool`.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(pol),
        )


def async_client(pol: OutboundPolicy, timeout: float = TIMEOUT_SECONDS) -> httpx.AsyncClient:
    """An httpx client for user-given destinations: guarded, redirects not followed."""
    return httpx.AsyncClient(
        transport=GuardedTransport(pol), timeout=timeout, follow_redirects=False, trust_env=False
    )
