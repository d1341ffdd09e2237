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
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import ssl
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import certifi
import httpcore
import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

from salesplan.errors import Unprocessable

T = TypeVar("T")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

REFUSED = "destination not allowed"
UNREACHABLE = "could not connect to the server"
# Seconds one provider request may take (connect, send, answer), and threads of the pool.
TIMEOUT_SECONDS = 15
POOL_THREADS = 16
# Of which one organization (the `key` of `run_blocking`) may hold at most this many.
PER_KEY_CALLS = 4
# How long a save-time check waits for DNS before leaving the decision to use time.
SAVE_CHECK_DNS_SECONDS = 5.0

LOOPBACK_NETWORKS: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# Never re-allowable by SALESPLAN_OUTBOUND_ALLOW.
NEVER = frozenset({"link_local", "unspecified", "multicast"})


class OutboundError(Exception):
    """An outbound request was not made or failed; `str()` is the text to record."""


class DestinationNotAllowed(OutboundError):
    def __init__(self) -> None:
        super().__init__(REFUSED)


class Unreachable(OutboundError):
    def __init__(self) -> None:
        super().__init__(UNREACHABLE)


# -- classification --------------------------------------------------------------------------


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, compatible, 6to4, NAT64)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    value = int(ip)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (IPv4-compatible, deprecated)
        return ipaddress.IPv4Address(value)
    if any(ip in net for net in NAT64):
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None


def unwrap(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address):
        return _embedded_v4(ip) or ip
    return ip


def classify(ip: IPAddress) -> str:
    """public, loopback, private, link_local, unspecified, multicast or reserved."""
    ip = unwrap(ip)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in SHARED_ADDRESS_SPACE):
        return "private"
    if not ip.is_global:
        return "reserved"
    return "public"


def parse_ip(host: str) -> IPAddress | None:
    """The address a literal host stands for, in any spelling the resolver accepts
    (`127.1`, `0x7f000001`, `0177.0.0.1`, `2130706433`, `[::1]`); None for a host name."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def parse_networks(value: str) -> tuple[IPNetwork, ...]:
    """`SALESPLAN_OUTBOUND_ALLOW`: comma-separated CIDRs (a bare address is its /32 or /128)."""
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False)
        for part in value.split(",")
        if part.strip()
    )


@dataclass(frozen=True)
class OutboundPolicy:
    allow: tuple[IPNetwork, ...] = ()

    def permits(self, ip: IPAddress) -> bool:
        kind = classify(ip)
        if kind == "public":
            return True
        if kind in NEVER:
            return False
        inner = unwrap(ip)
        return any(inner in net or ip in net for net in self.allow)

    def check(self, addresses: Iterable[IPAddress]) -> None:
        found = list(addresses)
        if not found or not all(self.permits(ip) for ip in found):
            raise DestinationNotAllowed()

    def resolve(self, host: str, port: int) -> list[str]:
        """Blocking: the addresses of `host`, all of them allowed (else DestinationNotAllowed);
        an unknown host is Unreachable."""
        literal = parse_ip(host)
        if literal is not None:
            self.check([literal])
            return [str(unwrap(literal))]
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise Unreachable() from None
        addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))
        ips = [ipaddress.ip_address(a) for a in addresses]
        self.check(ips)
        return [str(unwrap(ip)) for ip in ips]


@lru_cache(maxsize=32)
def _policy(allow: str, public_url: str) -> OutboundPolicy:
    networks = parse_networks(allow)
    host = urlsplit(public_url).hostname or ""
    literal = parse_ip(host)
    if host.lower() in ("localhost", "localhost.") or (
        literal is not None and classify(literal) == "loopback"
    ):
        networks = (*networks, *LOOPBACK_NETWORKS)
    return OutboundPolicy(networks)


def policy(settings: Any) -> OutboundPolicy:
    """The policy of these settings (`outbound_allow`, `public_url`)."""
    return _policy(getattr(settings, "outbound_allow", "") or "", settings.public_url)


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
        details = {"reason": "destination_not_allowed"}
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


# -- requests / urllib3 ----------------------------------------------------------------------


@dataclass
class _Call:
    """One blocking call on the pool: its sockets and the deadline of its current request."""

    deadline: float | None = None
    # The deadline the call was queued with: the first request's own deadline is never later,
    # so that a call that got its slot just in time does not start a fresh 15 s.
    queued_deadline: float | None = None
    aborted: bool = False
    sockets: weakref.WeakSet[socket.socket] = field(default_factory=weakref.WeakSet)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self.lock:
            if self.aborted:
                raise Unreachable()
            self.sockets.add(sock)

    def abort(self) -> None:
        """From another thread: wake the blocked socket operations (they fail at once)."""
        with self.lock:
            self.aborted = True
            sockets = list(self.sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


_local = threading.local()


def _current() -> _Call | None:
    return getattr(_local, "call", None)


@contextlib.contextmanager
def deadline(seconds: float = TIMEOUT_SECONDS) -> Iterator[None]:
    """Within a call on the pool: the requests made in this block end after `seconds`."""
    call = _current()
    if call is None:
        yield
        return
    due = time.monotonic() + seconds
    if call.queued_deadline is not None:  # the first request: the wait for a slot counts
        due = min(due, call.queued_deadline)
        call.queued_deadline = None
    call.deadline = due
    try:
        yield
    finally:
        call.deadline = None


class _GuardedConnectionMixin:
    policy: OutboundPolicy
    _dns_host: str
    port: int
    timeout: Any
    source_address: Any
    socket_options: Any
    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        call = _current()
        timeout = self.timeout
        if call is not None:
            due = call.deadline
            left = None if due is None else due - time.monotonic()
            if call.aborted or (left is not None and left <= 0):
                raise Unreachable()  # no new attempt (a library's retry) past the deadline
            if left is not None and isinstance(timeout, int | float):
                timeout = min(timeout, left)
        addresses = self.policy.resolve(self._dns_host, self.port)
        error: Exception | None = None
        for address in addresses:
            try:
                sock = urllib3_connection.create_connection(
                    (address, self.port),
                    timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except TimeoutError as exc:
                error = ConnectTimeoutError(self, UNREACHABLE)
                error.__cause__ = exc
                continue
            except OSError as exc:
                error = NewConnectionError(self, UNREACHABLE)  # type: ignore[arg-type]
                error.__cause__ = exc
                continue
            if call is not None:
                call.register(sock)
            return sock
        assert error is not None
        raise error

    def getresponse(self) -> Any:
        call = _current()
        if call is not None:
            call.register(self.sock)
        return super().getresponse()  # type: ignore[misc]


class GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


@lru_cache(maxsize=32)
def _pool_classes(pol: OutboundPolicy) -> dict[str, type[HTTPConnectionPool]]:
    http_conn = type("Conn", (GuardedHTTPConnection,), {"policy": pol})
    https_conn = type("Conn", (GuardedHTTPSConnection,), {"policy": pol})
    return {
        "http": type("Pool", (HTTPConnectionPool,), {"ConnectionCls": http_conn}),
        "https": type("Pool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn}),
    }


class GuardedAdapter(HTTPAdapter):
    def __init__(self, pol: OutboundPolicy) -> None:
        self._policy = pol
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self._policy)

    def proxy_manager_for(self, *args: Any, **kwargs: Any) -> Any:
        raise DestinationNotAllowed()


def guard_session(session: requests.Session, pol: OutboundPolicy) -> requests.Session:
    """Make `session` reach only what `pol` allows (every hop of a redirect included); no
    proxies or .netrc from the environment."""
    session.trust_env = False
    adapter = GuardedAdapter(pol)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


# -- the pool for blocking provider calls ----------------------------------------------------

_pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="outbound")
# After aborting an overdue request, how long to wait for its thread to notice.
_ABORT_GRACE_SECONDS = 2.0


def _in_call(call: _Call, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    due = call.deadline
    if call.aborted or (due is not None and time.monotonic() > due):
        raise Unreachable()  # waited for a slot or a thread past the deadline: do nothing
    call.queued_deadline = due  # bounds the first request's own deadline (see `deadline`)
    call.deadline = None  # from here on, each request's own (see `deadline`)
    _local.call = call
    try:
        return fn(*args)
    finally:
        _local.call = None


_per_key: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, tuple[asyncio.Semaphore, int]]
] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def _key_slot(key: str | None, seconds: float) -> AsyncIterator[None]:
    """One of the PER_KEY_CALLS slots of `key`, waited for at most `seconds` (Unreachable)."""
    if key is None:
        yield
        return
    table = _per_key.setdefault(asyncio.get_running_loop(), {})
    semaphore, users = table.get(key, (asyncio.Semaphore(PER_KEY_CALLS), 0))
    table[key] = (semaphore, users + 1)
    try:
        try:
            async with asyncio.timeout(seconds):
                await semaphore.acquire()
        except TimeoutError:
            raise Unreachable() from None
        try:
            yield
        finally:
            semaphore.release()
    finally:
        semaphore, users = table[key]
        if users <= 1:
            del table[key]
        else:
            table[key] = (semaphore, users - 1)


async def run_blocking(
    fn: Callable[..., T], *args: Any, key: str | None = None, seconds: float = TIMEOUT_SECONDS
) -> T:
    """Run a blocking provider call on the outbound pool (never the default executor), at most
    PER_KEY_CALLS at a time per `key` (an organization), so that one organization's slow
    provider leaves the pool to the others.

    Each request inside `fn` made within `deadline()` — and the wait for a slot and a thread —
    ends after `seconds` with Unreachable: the call's sockets are shut down, which frees its
    thread.
    """
    started = time.monotonic()
    async with _key_slot(key, seconds):
        call = _Call(deadline=started + seconds)  # the waits count
        future = asyncio.get_running_loop().run_in_executor(_pool, _in_call, call, fn, args)
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=0.5)
                if done:
                    return future.result()
                due = call.deadline
                if due is not None and time.monotonic() > due:
                    call.abort()
                    done, _ = await asyncio.wait({future}, timeout=_ABORT_GRACE_SECONDS)
                    if done:
                        return future.result()  # most likely its own "could not connect"
                    raise Unreachable()
        except BaseException:
            call.abort()
            raise
