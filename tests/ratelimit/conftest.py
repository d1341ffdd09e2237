"""Rate-limit test helpers: a controllable clock, both stores, an app with small limits, and a
Redis server of the test's own (for outages)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.ratelimit.store import MemoryStore, RedisStore
from tests.conftest import need_service


class FakeClock:
    """Unix seconds that only move when the test says so."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory_store(clock: FakeClock) -> MemoryStore:
    return MemoryStore(clock=clock)


def unique_prefix() -> str:
    return f"salesplan-test:{uuid.uuid4().hex}:"


@pytest.fixture
async def redis_store(redis_url: str) -> AsyncIterator[RedisStore]:
    store = RedisStore(redis_url, prefix=unique_prefix())
    if not await store.ping():
        need_service("Redis", f"{redis_url} does not answer")
    yield store
    await store.reset()
    await store.close()


@pytest.fixture(params=["memory", "redis"])
def any_store(request: pytest.FixtureRequest) -> Any:
    """Each store in turn (real time; the Redis one needs SALESPLAN_TEST_REDIS_URL)."""
    if request.param == "memory":
        return MemoryStore()
    return request.getfixturevalue("redis_store")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def app_client(settings: Settings) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    """A second app (own limiter and store) on the test database, with its lifespan."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield app, c


@pytest.fixture
def make_settings(settings: Settings) -> Callable[..., Settings]:
    def make(**update: Any) -> Settings:
        return settings.model_copy(update=update)

    return make


class RedisServer:
    """A redis-server of the test's own, on a free port, that the test may stop and restart."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        need_service("redis-server", "the binary is not on PATH")
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
