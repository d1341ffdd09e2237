"""Engine and the session dependency: one transaction per request, committed before the
response is sent, rolled back on any error. Services never commit.

The request's dependencies (`UoW`, `SessionDep`, `unit_of_work`, `check_available`) live in
`db_dependencies.py`, which imports FastAPI: a CLI command opens its unit of work from this
module without FastAPI."""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import (
    AsyncAdaptedQueuePool,
    ConnectionPoolEntry,
    PoolProxiedConnection,
    StaticPool,
)

from salesplan.config import Settings
from salesplan.kit.driver import closed_connection_error
from salesplan.kit.events import EventHandlers
from salesplan.kit.uow import Database, session_factory

log = logging.getLogger("salesplan.db")
# aiosqlite logs every statement with its parameters at DEBUG: the data written (a calendar
# provider's event bodies among them) has no place in logs, like `hide_parameters` below.
logging.getLogger("aiosqlite").setLevel(logging.INFO)


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _sqlite_pool(settings: Settings) -> dict[str, object]:
    """A small pool for the embedded default. Opening a SQLite connection costs a file open, the
    pragmas and (with aiosqlite) a new thread: ~1 ms per request when every request opened its
    own. WAL lets the pooled connections read while one writes; busy_timeout queues writers.
    An in-memory database exists once per connection, so it gets exactly one, shared."""
    if ":memory:" in settings.database_url or "mode=memory" in settings.database_url:
        return {"poolclass": StaticPool}
    return {
        "poolclass": AsyncAdaptedQueuePool,
        "pool_size": settings.sqlite_pool_size,
        "max_overflow": 0,
        "pool_timeout": 30,
    }


def create_engine(settings: Settings, **kwargs: Any) -> AsyncEngine:
    # Statement parameters are user data (e-mails, names): never in an exception's text, so
    # never in a logged traceback.
    kwargs.setdefault("hide_parameters", True)
    if settings.is_sqlite:
        settings.make_data_dir()  # the embedded default's folder, created on first use
        engine = create_async_engine(settings.database_url, **_sqlite_pool(settings), **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    statement_ms = max(1, round(settings.db_statement_timeout * 1000))
    connect_args = {
        "timeout": settings.db_connect_timeout,
        "command_timeout": settings.db_statement_timeout + 1,
        "server_settings": {"statement_timeout": str(statement_ms)},
    }
    idle = settings.db_pool_ping_idle_seconds
    engine = create_async_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        # Every checkout pinged: SQLAlchemy's own pre-ping (BEGIN; ping; ROLLBACK on asyncpg).
        pool_pre_ping=settings.db_pool_pre_ping and idle <= 0,
        pool_timeout=settings.db_pool_timeout,
        connect_args=connect_args | kwargs.pop("connect_args", {}),
        **kwargs,
    )
    if settings.db_pool_pre_ping and idle > 0:
        ping_when_idle(engine, idle)
    return engine


_LAST_USED = "salesplan_last_used"


def ping_when_idle(engine: AsyncEngine, idle_seconds: float) -> None:
    """Ping a pooled connection before handing it out only when it sat unused for
    `idle_seconds`: a connection that served a request a moment ago is alive (a ping per
    checkout is one to three round trips per request), one left over a quiet spell may have
    been dropped by a restart or a proxy. A connection failing the ping is replaced
    (DisconnectionError makes the pool retry with a new one). A connection killed while in
    use fails its request (503), and SQLAlchemy then renews the whole pool."""

    def checkout(
        dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        last = record.info.get(_LAST_USED)
        if last is not None and time.monotonic() - last >= idle_seconds:
            try:
                dbapi_connection.ping()
            except Exception as exc:
                raise DisconnectionError(str(type(exc).__name__)) from exc

    def checkin(_dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry) -> None:
        record.info[_LAST_USED] = time.monotonic()

    event.listen(engine.sync_engine, "checkout", checkout)
    event.listen(engine.sync_engine, "checkin", checkin)


# SQLSTATEs of a lost connection: connection exceptions (class 08) and a server shutting down,
# crashed or starting up (57P01-57P03).
_LOST_SQLSTATES = ("08", "57P01", "57P02", "57P03")
# A statement cancelled by statement_timeout (57014): the database answers, the statement was
# too slow. That request answers 503; the others go on (not an outage).
_UNAVAILABLE_SQLSTATES = (*_LOST_SQLSTATES, "57014")


def _database_failure(exc: BaseException, sqlstates: tuple[str, ...]) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):  # the exception and what caused it
        if seen is None:
            return False
        if isinstance(seen, PoolTimeout | TimeoutError | OSError):
            return True
        if isinstance(seen, DBAPIError):
            if seen.connection_invalidated:
                return True
            orig = seen.orig
            code = getattr(orig, "pgcode", None) or getattr(orig, "sqlstate", None)
            if code and str(code).startswith(sqlstates):
                return True
            if orig is not None and closed_connection_error(orig):
                return True
            seen = orig
            continue
        # The driver's own errors, raised past SQLAlchemy (kit.driver): same SQLSTATEs.
        code = getattr(seen, "sqlstate", None)
        if isinstance(code, str) and code.startswith(sqlstates):
            return True
        if closed_connection_error(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached or did not answer in time (rather
    than a bug): refused or lost connections, connect, statement and pool timeouts. The
    request answers 503."""
    return _database_failure(exc, _UNAVAILABLE_SQLSTATES)


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` is an outage: the connection to the database was refused, lost or timed
    out (contract §12 "failures stay local"). Only these pause every request
    (DatabaseHealth); a driver or statement error of one request (too many parameters, a value
    too long, a statement timeout) is that request's answer alone."""
    return _database_failure(exc, _LOST_SQLSTATES)


class AdmissionGate:
    """First come, first served: at most `size` API requests at once use the pool.

    SQLAlchemy's asyncio pool hands a returned connection to whichever task asks next, so a
    request woken for a connection often finds it taken by a newcomer and queues again at the
    back: with more requests in flight than connections, some wait many times the median (64
    connections on a pool of 10 + 10: p99 7 to 19 times p50 for reads, 6 times for
    updatePlanTask, bench/README.md). Requests wait here instead, in arrival order, and a
    finishing request hands its place straight to the oldest waiter whose organization holds
    less than `share` places (half the gate: issue 38, one organization waiting on a lock left
    another's requests 503). `size` is half the pool's
    connections, so that every admitted request can hold a second connection at once (its API
    key's lookup) without waiting for the pool, and the worker's jobs and the MCP and OAuth
    endpoints have connections left.

    A request that waits longer than `timeout` (the pool's own timeout) is answered 503
    `service_unavailable` with Retry-After by the middleware, without taking the database for
    down: it is busy, not gone."""

    def __init__(self, size: int, timeout: float, share: int | None = None) -> None:
        self.size = size
        self.timeout = timeout
        # At most this many places per key (the organization a request names): one
        # organization whose requests wait on a lock cannot take the whole gate from the others.
        self.share = share if share is not None else max(1, size // 2)
        self.active = 0
        self.held: dict[Hashable, int] = {}
        self._waiting: collections.deque[tuple[asyncio.Future[None], Hashable | None]] = (
            collections.deque()
        )

    def _may(self, key: Hashable | None) -> bool:
        return key is None or self.held.get(key, 0) < self.share

    def _take(self, key: Hashable | None) -> None:
        if key is not None:
            self.held[key] = self.held.get(key, 0) + 1

    def _next_waiter(self) -> tuple[asyncio.Future[None], Hashable | None] | None:
        """The oldest waiter whose key is under its share (taken out of the line), if any."""
        for entry in self._waiting:
            place, key = entry
            if not place.done() and self._may(key):
                self._waiting.remove(entry)
                return entry
        return None

    async def enter(self, key: Hashable | None = None) -> bool:
        """Take a place, waiting in line when all are taken or `key` holds its share; False
        after `timeout` seconds of waiting (the caller answers 503 and must not `leave`)."""
        if self.active < self.size and self._may(key) and not self._eligible_waiting():
            self.active += 1
            self._take(key)
            return True
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((place, key))
        try:
            async with asyncio.timeout(self.timeout):
                await place  # resolved by `leave` with its place already counted
        except TimeoutError:
            if place.done() and not place.cancelled():
                return True  # handed over just as the wait ran out
            self._forget(place)
            return False
        except BaseException:
            if place.done() and not place.cancelled():
                self.leave(key)  # handed over as the request was cancelled: pass it on
            else:
                self._forget(place)
            raise
        return True

    def _eligible_waiting(self) -> bool:
        return any(not place.done() and self._may(key) for place, key in self._waiting)

    def leave(self, key: Hashable | None = None) -> None:
        if key is not None:
            left = self.held.get(key, 0) - 1
            if left > 0:
                self.held[key] = left
            else:
                self.held.pop(key, None)
        while (waiter := self._next_waiter()) is not None:
            place, waiting_key = waiter
            try:
                place.set_result(None)
            except RuntimeError:
                continue  # its event loop is closed (an app served by more than one loop)
            self._take(waiting_key)
            return
        self.active -= 1

    def _forget(self, place: asyncio.Future[None]) -> None:
        place.cancel()
        for entry in self._waiting:
            if entry[0] is place:
                self._waiting.remove(entry)
                break


def create_admission_gate(settings: Settings) -> AdmissionGate | None:
    """The gate of a pooled server database (PostgreSQL); None for the embedded SQLite."""
    if settings.is_sqlite:
        return None
    size = max(1, (settings.db_pool_size + settings.db_max_overflow) // 2)
    return AdmissionGate(size, settings.db_pool_timeout)


class DatabaseHealth:
    """What requests know of the database between health checks. After a failure to reach
    it, requests answer 503 at once for `pause` seconds instead of each waiting for a timeout
    (a hung server then costs one request per pause a timeout, not every request), and the
    outage is logged once per `log_interval`, without a traceback per request."""

    def __init__(self, *, pause: float = 2.0, log_interval: float = 60.0) -> None:
        self.pause = pause
        self.log_interval = log_interval
        self._down_until = -math.inf
        self._last_log = -math.inf
        self.failures = 0

    @property
    def paused(self) -> bool:
        return time.monotonic() < self._down_until

    def failed(self, exc: BaseException) -> None:
        self.failures += 1
        now = time.monotonic()
        self._down_until = now + self.pause
        if now - self._last_log >= self.log_interval:
            self._last_log = now
            log.error(
                "database unavailable (%s); answering 503 service_unavailable until it answers",
                type(exc).__name__,
            )

    def recovered(self) -> None:
        self._down_until = -math.inf


def create_sessionmaker(
    engine: AsyncEngine, handlers: EventHandlers
) -> async_sessionmaker[AsyncSession]:
    """Sessions whose commit (`kit.uow.commit`) runs `handlers` on the domain events their
    writes emit: the app's are `salesplan.events.handlers()`, wired by the composition root."""
    return session_factory(engine, handlers)


def create_read_engine(engine: AsyncEngine) -> AsyncEngine:
    """The engine of hot reads (`ReadConnection`), sharing `engine`'s pool. On PostgreSQL its
    connections run in autocommit: no BEGIN and no ROLLBACK round trip around the reads."""
    if engine.dialect.name != "postgresql":
        return engine
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def create_read_sessionmaker(
    engine: AsyncEngine, handlers: EventHandlers
) -> async_sessionmaker[AsyncSession]:
    """Sessions for `@read_only` endpoints. On PostgreSQL their connection runs in autocommit:
    no BEGIN and no COMMIT round trip around the request's reads. Under READ COMMITTED (the
    default) each statement takes its own snapshot inside a transaction too, so what a read
    sees is the same; a write a read path does (the API key's last_used_at, once a minute)
    commits on its own, which is all it needs."""
    if engine.dialect.name != "postgresql":
        return create_sessionmaker(engine, handlers)
    return create_sessionmaker(engine.execution_options(isolation_level="AUTOCOMMIT"), handlers)


def create_database(engine: AsyncEngine, handlers: EventHandlers) -> Database:
    """The factories a unit of work opens from (`app.state.database`)."""
    return Database(
        sessionmaker=create_sessionmaker(engine, handlers),
        read_sessionmaker=create_read_sessionmaker(engine, handlers),
        engine=engine,
        read_engine=create_read_engine(engine),
    )


RETRY_AFTER_SECONDS = 5

F = TypeVar("F", bound=Callable[..., object])


def read_only(endpoint: F) -> F:
    """Mark a route whose request only reads (hot GETs): its session skips BEGIN/COMMIT.
    Put it under the `@router.get(...)` decorator."""
    vars(endpoint)["__salesplan_read_only__"] = True  # read by `_read_only`
    return endpoint
