"""Blocking outbound clients (CalDAV on `requests`), guarded (contract §12): a urllib3
connection class that connects only to addresses `OutboundPolicy` allows (each redirect hop
too), and a bounded pool of their own (`run_blocking`), each request with a deadline, so a slow
server cannot hold the default executor or another organization's work. Import it from
`kit.outbound`."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

from salesplan.kit.outbound_policy import (
    TIMEOUT_SECONDS,
    UNREACHABLE,
    DestinationNotAllowed,
    OutboundPolicy,
    Unreachable,
)

T = TypeVar("T")

# Threads of the pool, of which one organization (the `key` of `run_blocking`) may hold at most
# PER_KEY_CALLS.
POOL_THREADS = 16
PER_KEY_CALLS = 4


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


def _in_call(call: _Call, fn: Callable[..., T], args: tuple[object, ...]) -> T:
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
    fn: Callable[..., T], *args: object, key: str | None = None, seconds: float = TIMEOUT_SECONDS
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
