"""MCP across processes without stickiness (contract §9, issue 15): two `salesplan serve`
processes on one PostgreSQL database and one Redis, a round-robin proxy in front of them that
sends each HTTP request to the other process, and the SDK's own client through the proxy. The
session initialized on one process, the organization remembered on one, every tool on both."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from salesplan.config import Settings
from tests.conftest import need_service
from tests.fixtures.crm import make_account
from tests.fixtures.factories import make_key
from tests.mcp.conftest import body, connect, error, serve
from tests.mcp.test_http import INITIALIZE, MCP_HEADERS
from tests.mcp.test_organization_context import two_orgs
from tests.ratelimit.conftest import free_port, unique_prefix


@dataclass
class RoundRobin:
    """A tiny HTTP proxy: request n goes to backend n mod len(backends), streamed both ways.
    `served` records (backend index, JSON-RPC method, tool name) of every request."""

    backends: list[str] = field(default_factory=list)
    served: list[tuple[int, str | None, str | None]] = field(default_factory=list)
    count: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].removeprefix("lifespan.")
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        index = self.count % len(self.backends)
        self.count += 1
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        payload = b"".join(chunks)
        self.served.append((index, *_rpc(payload)))
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"host", b"content-length")]
        url = self.backends[index] + scope["path"]
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode()
        async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=60)) as client:
            request = client.build_request(scope["method"], url, headers=headers, content=payload)
            response = await client.send(request, stream=True)
            try:
                await send(
                    {
                        "type": "http.response.start",
                        "status": response.status_code,
                        "headers": [
                            (k, v)
                            for k, v in response.headers.raw
                            if k.lower() not in (b"content-length", b"transfer-encoding")
                        ],
                    }
                )
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                await response.aclose()


def _rpc(payload: bytes) -> tuple[str | None, str | None]:
    try:
        message: Any = json.loads(payload)
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    params = message.get("params") or {}
    return message.get("method"), params.get("name") if isinstance(params, dict) else None


@dataclass
class Cluster:
    url: str  # the proxy's {origin}/mcp
    proxy: RoundRobin


def _start(env: dict[str, str], port: int, cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "salesplan.cli", "serve", "--port", str(port)],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_healthy(process: subprocess.Popen[bytes], origin: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            stderr = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"serve exited: {stderr}")
        try:
            if httpx.get(f"{origin}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("serve did not come up")
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def backend_env(settings: Settings, redis_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    if not settings.database_url.startswith("postgresql"):
        need_service("PostgreSQL", "two processes on one database need SALESPLAN_TEST_DATABASE_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    yield env | {
        "SALESPLAN_DATABASE_URL": settings.database_url,
        "SALESPLAN_REDIS_URL": redis_url,
        "SALESPLAN_REDIS_PREFIX": unique_prefix(),
        "SALESPLAN_SECRET_KEY": "two-processes-test-secret",
        "SALESPLAN_WORKER_IN_PROCESS": "false",
        "SALESPLAN_LOG_LEVEL": "warning",
    }


@pytest.fixture
async def cluster(
    backend_env: dict[str, str], app: object, tmp_path: Path
) -> AsyncIterator[Cluster]:
    """Two processes behind the round-robin proxy; `app` (the in-process test app) empties the
    shared database afterwards."""
    proxy = RoundRobin()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with serve(proxy) as front:  # type: ignore[arg-type]
            origin = front.url.removesuffix("/mcp")
            env = backend_env | {"SALESPLAN_PUBLIC_URL": origin}
            ports = [free_port(), free_port()]
            processes += [_start(env, port, tmp_path) for port in ports]
            for process, port in zip(processes, ports, strict=True):
                _wait_healthy(process, f"http://127.0.0.1:{port}")
            proxy.backends = [f"http://127.0.0.1:{port}" for port in ports]
            yield Cluster(front.url, proxy)
    finally:
        # The proxy stops first: a stream it still relayed held a backend's graceful stop open,
        # and `_stop` blocks this loop (the proxy's) until its SIGKILL 30 s later.
        for process in processes:
            _stop(process)


def tool_backends(proxy: RoundRobin, tool: str) -> set[int]:
    return {
        index for index, method, name in proxy.served if method == "tools/call" and name == tool
    }


async def test_one_session_across_two_processes_remembers_its_organization(cluster, db):
    orgs = await two_orgs(db)
    alpha, _ = await make_account(db, orgs.a.id, "Alpha account")
    beta, _ = await make_account(db, orgs.b.id, "Beta account")
    await db.commit()
    async with connect(cluster.url, orgs.key) as client:
        listed = body(await client.call_tool("listOrganizations", {"sortBy": "name"}))
        assert [o["name"] for o in listed["data"]] == ["Alpha", "Beta"]
        assert error(await client.call_tool("listAccounts", {}))["code"] == (
            "organization_required"
        )
        chosen = body(
            await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
        )
        assert chosen["id"] == str(orgs.b.id)
        for _ in range(4):  # lands on both processes
            accounts = body(await client.call_tool("listAccounts", {}))
            assert [a["name"] for a in accounts["data"]] == ["Beta account"]
        created = body(await client.call_tool("createAccount", {"name": "Made in Beta"}))
        read = body(await client.call_tool("getAccount", {"accountId": created["id"]}))
        assert read["name"] == "Made in Beta"
        plan = body(
            await client.call_tool(
                "createPlan",
                {"name": "Beta plan", "entityType": "ACCOUNT", "entityId": str(beta.id)},
            )
        )
        task = body(
            await client.call_tool("createPlanTask", {"planId": plan["id"], "title": "Call"})
        )
        done = body(
            await client.call_tool(
                "updatePlanTask", {"planId": plan["id"], "taskId": task["id"], "completed": True}
            )
        )
        assert done["completed"] is True
        full = body(await client.call_tool("getPlan", {"planId": plan["id"]}))
        assert [t["title"] for t in full["tasks"]] == ["Call"]
        plans = body(await client.call_tool("listPlans", {"accountId": str(beta.id)}))
        assert [p["id"] for p in plans["data"]] == [plan["id"]]
        deleted = body(await client.call_tool("deleteAccount", {"accountId": created["id"]}))
        assert deleted == {"deleted": True, "id": created["id"]}
        by_header = body(
            await client.call_tool("listAccounts", {"headers": {"xOrganizationId": str(orgs.a.id)}})
        )
        assert [a["id"] for a in by_header["data"]] == [str(alpha.id)]
        still = body(await client.call_tool("listAccounts", {}))
        assert [a["name"] for a in still["data"]] == ["Beta account"]
    # The requests really alternated: the session's calls were served by both processes.
    assert tool_backends(cluster.proxy, "listAccounts") == {0, 1}
    assert {index for index, *_ in cluster.proxy.served} == {0, 1}


async def test_a_session_id_is_refused_to_another_token_on_every_process(cluster, db):
    orgs = await two_orgs(db)
    intruder = await make_key(db, orgs.user)
    auth = {"Authorization": f"Bearer {orgs.key}"}
    async with httpx.AsyncClient(timeout=30) as http:
        init = await http.post(cluster.url, json=INITIALIZE, headers=MCP_HEADERS | auth)
        assert init.status_code == 200
        session = {
            "Mcp-Session-Id": init.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18",
        }
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        statuses = []
        for key in (intruder, intruder, orgs.key, orgs.key):
            resp = await http.post(
                cluster.url,
                json=listing,
                headers=MCP_HEADERS | session | {"Authorization": f"Bearer {key}"},
            )
            statuses.append(resp.status_code)
    assert statuses == [404, 404, 200, 200]
    assert {index for index, *_ in cluster.proxy.served} == {0, 1}


async def test_session_less_clients_are_remembered_per_token_across_processes(cluster, db):
    orgs = await two_orgs(db)
    await make_account(db, orgs.b.id, "Beta account")
    await db.commit()
    async with connect(cluster.url, orgs.key, mode="2026-07-28") as client:
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
        for _ in range(3):
            accounts = body(await client.call_tool("listAccounts", {}))
            assert [a["name"] for a in accounts["data"]] == ["Beta account"]
    assert tool_backends(cluster.proxy, "listAccounts") == {0, 1}


async def test_a_session_ended_by_delete_is_refused_on_every_process(cluster, db):
    """Contract §12: `DELETE /mcp` ends the session; its id is refused afterwards by every
    process (the mark is in the shared store), while a new session of the token works."""
    orgs = await two_orgs(db)
    auth = {"Authorization": f"Bearer {orgs.key}"}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(timeout=30) as http:
        init = await http.post(cluster.url, json=INITIALIZE, headers=MCP_HEADERS | auth)
        assert init.status_code == 200
        session = {
            "Mcp-Session-Id": init.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18",
        }
        alive = await http.post(cluster.url, json=listing, headers=MCP_HEADERS | session | auth)
        assert alive.status_code == 200
        ended = await http.delete(cluster.url, headers=MCP_HEADERS | session | auth)
        assert ended.status_code == 200
        statuses = []
        for _ in range(4):
            resp = await http.post(cluster.url, json=listing, headers=MCP_HEADERS | session | auth)
            statuses.append(resp.status_code)
        again = await http.delete(cluster.url, headers=MCP_HEADERS | session | auth)
        fresh = await http.post(cluster.url, json=INITIALIZE, headers=MCP_HEADERS | auth)
    assert statuses == [404, 404, 404, 404]
    assert again.status_code == 404
    assert fresh.status_code == 200 and fresh.headers["mcp-session-id"] != session["Mcp-Session-Id"]
    assert {index for index, *_ in cluster.proxy.served} == {0, 1}
