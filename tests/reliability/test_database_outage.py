"""A database that refuses or hangs (issue 18, defect 7): requests answer 503
service_unavailable (ErrorEnvelope, Retry-After) within the configured timeouts instead of a
500 or a hang, the outage is logged once per failure window, and service resumes with the
database. The test puts a TCP proxy of its own in front of PostgreSQL and freezes or closes
that, never the shared server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy.engine import make_url

from salesplan.app import create_app
from tests.conftest import need_service
from tests.fixtures.envelope import assert_envelope

ORGS = "/api/v1/organizations"
HANG_GUARD = 60  # seconds: only so that a regression fails instead of hanging the suite


class FreezableProxy:
    """Forwards TCP to the database; `freeze()` stops forwarding (a hung server), `close()`
    drops every connection and refuses new ones, `thaw()`/`open()` undo them."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None
        self.port = 0
        self._writers: list[asyncio.StreamWriter] = []

    async def open(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    def freeze(self) -> None:
        self.flowing.clear()

    def thaw(self) -> None:
        self.flowing.set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    await self.flowing.wait()
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


@contextlib.asynccontextmanager
async def proxied_app(settings) -> AsyncIterator[tuple[FreezableProxy, httpx.AsyncClient]]:
    url = make_url(settings.database_url)
    proxy = FreezableProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.open()
    proxied = settings.model_copy(
        update={
            "database_url": url.set(host="127.0.0.1", port=proxy.port).render_as_string(
                hide_password=False
            ),
            "db_connect_timeout": 1.0,
            "db_statement_timeout": 1.0,
            "db_pool_timeout": 1.0,
        }
    )
    app = create_app(proxied)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
        ):
            yield proxy, client
    finally:
        await proxy.close()


@pytest.fixture
def postgres(is_postgres: bool) -> None:
    if not is_postgres:
        need_service("PostgreSQL", "the outage is simulated on a TCP connection")


async def _until_served(client, actor) -> None:
    for _ in range(100):
        if (await client.get(ORGS, headers=actor.headers)).status_code == 200:
            return
        await asyncio.sleep(0.1)
    pytest.fail("service did not resume with the database")


async def test_a_refused_database_is_a_503_logged_once(
    postgres, settings, actor, caplog: pytest.LogCaptureFixture
) -> None:
    async with proxied_app(settings) as (proxy, client):
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
        await proxy.close()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            for _ in range(20):
                resp = await asyncio.wait_for(client.get(ORGS, headers=actor.headers), HANG_GUARD)
                error = assert_envelope(resp, 503, "service_unavailable")
                assert resp.headers["retry-after"] == str(error["details"]["retryAfterSeconds"])
            health = await asyncio.wait_for(client.get("/healthz"), HANG_GUARD)
            assert health.status_code == 503
            assert health.json()["checks"]["database"] == "unavailable"
        errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(errors) == 1, [r.getMessage() for r in errors]
        assert errors[0].exc_info is None
        await proxy.open()
        assert (await client.get("/healthz")).status_code == 200
        await _until_served(client, actor)


async def test_a_hung_database_is_a_503_not_a_hang(postgres, settings, actor) -> None:
    async with proxied_app(settings) as (proxy, client):
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
        proxy.freeze()
        resp = await asyncio.wait_for(client.get(ORGS, headers=actor.headers), HANG_GUARD)
        assert_envelope(resp, 503, "service_unavailable")
        health = await asyncio.wait_for(client.get("/healthz"), HANG_GUARD)
        assert health.status_code == 503
        proxy.thaw()
        await _until_served(client, actor)


async def test_after_a_database_failure_requests_answer_503_at_once(
    settings, schema, actor
) -> None:
    """Both engines: within the pause after a failure, no request waits for a timeout again."""
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        app.state.db_health.failed(ConnectionRefusedError())
        resp = await client.get(ORGS, headers=actor.headers)
        assert_envelope(resp, 503, "service_unavailable")
        assert "retry-after" in resp.headers
        assert (await client.get("/healthz")).status_code == 200  # the probe still asks
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
