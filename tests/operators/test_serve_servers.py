"""`salesplan serve` does the same under either server it runs (`--server granian`, the default,
and `--server uvicorn`): links name the origin served, the INFO access log is on, in uvicorn's
shape, and holds no link signature, X-Forwarded-For is not believed from an untrusted peer, the
app's lifespan runs (the embedded worker) and SIGTERM stops it cleanly, and `--workers N` serves
from N processes (PostgreSQL + Redis)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from salesplan.cli.serving import SERVERS
from tests.conftest import need_service
from tests.fixtures.served import came_up
from tests.operators.test_access_log import SIGNATURE, _links
from tests.operators.test_serve import free_port


def start(
    env: dict[str, str], cwd: Path, server: str, *args: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "salesplan.cli",
            "serve",
            "--server",
            server,
            "--port",
            str(port),
            *args,
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    origin = f"http://127.0.0.1:{port}"
    if not came_up(process, origin, 120):
        os.killpg(process.pid, signal.SIGKILL)
        output = process.communicate(timeout=20)[0].decode()
        pytest.fail(f"serve --server {server} did not start: {output}")
    return process, origin


def stop(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """SIGTERM to the server (as a process manager sends it); its exit code and output."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        output = process.communicate(timeout=60)[0].decode()
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("serve did not stop on SIGTERM")
    return process.returncode, output


def assert_stopped_cleanly(server: str, code: int, log: str) -> None:
    """granian exits 0 after a graceful stop; uvicorn, once its graceful shutdown is complete
    (the lifespan closed), raises the signal it caught again, as it does since 0.29, so that its
    supervisor sees it ended by SIGTERM."""
    if server == "uvicorn":
        assert code in (0, -signal.SIGTERM), log
        assert "Application shutdown complete" in log, log
    else:
        assert code == 0, log


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_serves_as_serve_does(server: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env |= {
        "SALESPLAN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}",
        "SALESPLAN_LOG_LEVEL": "info",
        "SALESPLAN_IP_RATE_LIMIT_PER_MINUTE": "2",
    }
    process, origin = start(env, tmp_path, server)
    try:
        meta = httpx.get(f"{origin}/api/v1/meta").json()
        assert meta["mcp"]["url"] == f"{origin}/mcp"
        issuer = httpx.get(f"{origin}/.well-known/oauth-authorization-server").json()["issuer"]
        assert issuer == origin
        # No trusted proxy: the peer (127.0.0.1) is the client whatever X-Forwarded-For says,
        # so the third token request of the minute is a 429.
        statuses = [
            httpx.post(
                f"{origin}/api/v1/oauth/token",
                data={"grant_type": "client_credentials"},
                headers={"X-Forwarded-For": f"203.0.113.{i}"},
            ).status_code
            for i in range(3)
        ]
        assert statuses[2] == 429, statuses
        for method, path in _links():
            assert httpx.request(method, origin + path).status_code == 404
    finally:
        code, log = stop(process)
    assert_stopped_cleanly(server, code, log)
    assert '"GET /healthz HTTP/1.1" 200' in log  # the access log is on, in uvicorn's shape
    assert log.count("[redacted]") == 4, log
    assert SIGNATURE not in log, log


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_serves_from_several_worker_processes(
    server: str, empty_database_url: str, redis_url: str, tmp_path: Path
) -> None:
    if not empty_database_url.startswith("postgresql"):
        need_service("PostgreSQL", "serve --workers 2 needs SALESPLAN_TEST_DATABASE_URL")
    env = os.environ | {
        "SALESPLAN_DATABASE_URL": empty_database_url,
        "SALESPLAN_REDIS_URL": redis_url,
        "SALESPLAN_SECRET_KEY": "serve-workers-secret",
        "SALESPLAN_LOG_LEVEL": "info",  # the graceful stop's lines
    }
    migrated = subprocess.run(
        [sys.executable, "-m", "salesplan.cli", "migrate"], env=env, capture_output=True
    )
    assert migrated.returncode == 0, migrated.stderr
    process, origin = start(env, tmp_path, server, "--workers", "2")
    try:
        for _ in range(20):
            assert httpx.get(f"{origin}/healthz").status_code == 200
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
        ).stdout.split()
        assert len(children) >= 2, children
        organizations = httpx.get(f"{origin}/api/v1/organizations")
        assert organizations.status_code == 401
        assert json.loads(organizations.text)["error"]["code"] == "unauthorized"
    finally:
        code, log = stop(process)
    assert_stopped_cleanly(server, code, log)
