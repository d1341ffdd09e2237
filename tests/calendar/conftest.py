from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from salesplan.worker.context import WorkerContext
from tests.calendar.radicale_server import Radicale, start_radicale
from tests.mcp.conftest import mcp, mcp_server  # noqa: F401  (the MCP tests' server fixtures)


@pytest.fixture(scope="session")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    """Radicale is a dev dependency, so these tests never skip."""
    server = start_radicale(Path(tmp_path_factory.mktemp("radicale")))
    yield server
    server.process.terminate()
    server.process.wait(timeout=10)


@pytest.fixture(autouse=True)
def _local_radicale_allowed(
    outbound_allow: object, request: pytest.FixtureRequest
) -> Iterator[None]:
    """Radicale runs on loopback, which a non-loopback public URL refuses (contract §12): allowed
    for the test app and, in the MCP tests, for the MCP server's app."""
    if "mcp" not in request.fixturenames:
        yield
        return
    settings = request.getfixturevalue("mcp").app.state.settings
    before, settings.outbound_allow = settings.outbound_allow, "127.0.0.0/8"
    yield
    settings.outbound_allow = before


@pytest.fixture
def worker(app: object) -> WorkerContext:
    state = app.state  # type: ignore[attr-defined]
    return WorkerContext(
        settings=state.settings,
        engine=state.engine,
        sessionmaker=state.sessionmaker,
        worker_id="test-worker",
    )
