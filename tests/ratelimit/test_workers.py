"""`salesplan serve --workers 4` on PostgreSQL + Redis: one bucket across every worker process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import need_service
from tests.ratelimit.conftest import free_port, unique_prefix

LIMIT = 10


def cli(env: dict[str, str], *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


@pytest.fixture
def server_env(empty_database_url: str, redis_url: str) -> dict[str, str]:
    if not empty_database_url.startswith("postgresql"):
        need_service("PostgreSQL", "serve --workers 4 needs SALESPLAN_TEST_DATABASE_URL")
    return os.environ | {
        "SALESPLAN_DATABASE_URL": empty_database_url,
        "SALESPLAN_REDIS_URL": redis_url,
        "SALESPLAN_REDIS_PREFIX": unique_prefix(),
        "SALESPLAN_SECRET_KEY": "workers-test-secret",
        "SALESPLAN_RATE_LIMITS": json.dumps({"organizations": {"read": LIMIT}}),
        "SALESPLAN_LOG_LEVEL": "warning",
    }


@pytest.fixture
def served(server_env: dict[str, str]) -> Iterator[str]:
    cli(server_env, "migrate")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "salesplan.cli", "serve", "--workers", "4", "--port", str(port)],
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                pytest.fail(f"serve exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail("serve did not come up")
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


async def test_four_workers_share_one_bucket_exactly(
    server_env: dict[str, str], served: str
) -> None:
    org = cli(server_env, "admin", "create-org", "--name", "Workers")
    user = cli(
        server_env,
        "admin",
        "create-user",
        "--org",
        org["id"],
        "--email",
        "workers@example.com",
        "--password",
        "pw-123456-passphrase",
        "--role",
        "admin",
    )
    key = cli(
        server_env, "admin", "create-api-key", "--user", user["id"], "--scope", "organizations:read"
    )
    headers = {"Authorization": f"Bearer {key['key']}"}
    limits = httpx.Limits(max_connections=LIMIT + 20)
    async with httpx.AsyncClient(base_url=served, limits=limits, timeout=60) as client:
        meta = (await client.get("/api/v1/meta")).json()["rateLimiting"]
        assert meta["store"] == "shared" and meta["groups"]["organizations"]["read"] == LIMIT
        responses = await asyncio.gather(
            *(client.get("/api/v1/organizations", headers=headers) for _ in range(LIMIT + 20))
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == LIMIT
    assert statuses.count(429) == 20
    remaining = sorted(
        int(r.headers["x-ratelimit-remaining"]) for r in responses if r.status_code == 200
    )
    assert remaining == list(range(LIMIT))
