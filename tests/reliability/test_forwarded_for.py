"""X-Forwarded-For is believed only from configured proxies (issue 18, defect 14): per-IP
limits count the peer unless it is in SALESPLAN_TRUSTED_PROXIES (default none).

Checked end to end on the real `salesplan serve`, under each HTTP server it can run (granian, the
default, and uvicorn): one server trusting 127.0.0.2 only, requests from the peer 127.0.0.2 (a
trusted proxy: X-Forwarded-For names the client) and from 127.0.0.1 (not trusted, though it is
the address a server's own proxy-header support trusts by default, as uvicorn's
`forwarded_allow_ips` does: the header must be ignored, whatever the server would do)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from salesplan.cli.serving import SERVERS
from tests.fixtures.served import came_up
from tests.operators.test_serve import free_port

TOKEN = "/api/v1/oauth/token"
PROXY = "127.0.0.2"  # the one trusted proxy
STRANGER = "127.0.0.1"  # a peer that is not one


@pytest.fixture(scope="module", params=SERVERS)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`salesplan serve --server <name>` on a fresh embedded database, 2 token requests a minute
    per client address, 127.0.0.2 the only trusted proxy."""
    folder = tmp_path_factory.mktemp(f"forwarded-{request.param}")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env |= {
        "SALESPLAN_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'serve.db'}",
        "SALESPLAN_IP_RATE_LIMIT_PER_MINUTE": "2",
        "SALESPLAN_TRUSTED_PROXIES": PROXY,
        "SALESPLAN_LOG_LEVEL": "warning",
    }
    command = [sys.executable, "-m", "salesplan.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--server", request.param],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    origin = f"http://127.0.0.1:{port}"
    try:
        if not came_up(process, origin, 120):
            stderr = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"serve --server {request.param} did not start: {stderr}")
        yield origin
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def statuses(origin: str, peer: str, forwarded: list[str]) -> list[int]:
    """Token requests from `peer`, each claiming the next X-Forwarded-For."""
    transport = httpx.HTTPTransport(local_address=peer)
    with httpx.Client(transport=transport, base_url=origin) as client:
        return [
            client.post(
                TOKEN,
                data={"grant_type": "client_credentials"},
                headers={"X-Forwarded-For": address},
            ).status_code
            for address in forwarded
        ]


def test_forwarded_for_from_an_untrusted_peer_is_ignored(served: str) -> None:
    """Four clients claimed by 127.0.0.1: one client, the peer; its third request is over."""
    answered = statuses(served, STRANGER, [f"203.0.113.{i}" for i in range(4)])
    assert answered[2:] == [429, 429], answered


def test_forwarded_for_from_a_trusted_proxy_names_the_client(served: str) -> None:
    """Four clients through the trusted proxy: four buckets, none over; one client claimed four
    times through it: its own bucket, over at the third."""
    answered = statuses(served, PROXY, [f"198.51.100.{i}" for i in range(4)])
    assert 429 not in answered, answered
    answered = statuses(served, PROXY, ["192.0.2.7"] * 4)
    assert answered[2:] == [429, 429], answered
