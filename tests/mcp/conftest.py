"""A real HTTP server for the MCP tests: uvicorn on a free loopback port, in this event loop, on
the test database, with a small `foundation` write limit so that 429 is reachable."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
import uvicorn
from fastapi import FastAPI
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import NoArgs, mcp_tool

META_WRITE_LIMIT = 3
TEST_TOOL = "testOrganizationContext"


# A test-only adapter that shows which organization context a call resolves, through the same
# pipeline as every organization-scoped tool.
@mcp_tool(
    TEST_TOOL,
    scope="organizations:read",
    group="organizations",
    description="Test only: the organization this call acts in.",
)
async def _organization_context(call: ToolCall, args: NoArgs) -> Any:
    return {"organizationId": str(call.ctx.organization_id)}


@dataclass
class McpServer:
    app: FastAPI
    url: str  # {origin}/mcp


@contextlib.asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[McpServer]:
    """uvicorn on a free loopback port, in this event loop."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        lifespan="on",
        log_level="warning",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield McpServer(app, f"http://127.0.0.1:{port}/mcp")
    finally:
        server.should_exit = True
        await task


@pytest.fixture(scope="session")
async def mcp_server(settings: Settings, schema: None) -> AsyncIterator[McpServer]:
    app = create_app(
        settings.model_copy(
            update={"rate_limits": {"foundation": {"read": 120, "write": META_WRITE_LIMIT}}}
        )
    )
    async with serve(app) as server:
        yield server


@pytest.fixture
async def mcp(mcp_server: McpServer, app: object) -> McpServer:
    """The server with empty buckets and memory; `app` truncates the database after the test."""
    await mcp_server.app.state.rate_limiter.store.reset()
    return mcp_server


@contextlib.asynccontextmanager
async def connect(
    url: str, key: str | None, *, mode: str = "legacy", headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The SDK's own client over streamable HTTP with a bearer token (and `headers`)."""
    headers = ({"Authorization": f"Bearer {key}"} if key else {}) | (headers or {})
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


def body(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, result.content
    data: dict[str, Any] = result.structured_content
    return data


def error(result: Any) -> dict[str, Any]:
    """The ErrorEnvelope's `error` of a failed tool result (text and structured content agree;
    a read tool, which publishes an output schema, carries the envelope as text only)."""
    import json

    assert result.is_error, result
    envelope = json.loads(result.content[0].text)
    assert result.structured_content in (envelope, None)
    assert set(envelope) == {"error"}
    assert set(envelope["error"]) == {"code", "message", "details"}
    err: dict[str, Any] = envelope["error"]
    return err


async def rest(
    mcp: McpServer,
    key: str,
    method: str,
    path: str,
    *,
    json: Any = None,
    headers: dict[str, str] | None = None,
) -> httpx2.Response:
    """The REST operation on the same server (same app, same buckets), with the same key."""
    async with httpx2.AsyncClient() as http:
        return await http.request(
            method,
            mcp.url.removesuffix("/mcp") + "/api/v1" + path,
            json=json,
            headers={"Authorization": f"Bearer {key}"} | (headers or {}),
        )


async def rest_body(mcp: McpServer, key: str, path: str) -> Any:
    """A REST GET's JSON body (asserting 200)."""
    resp = await rest(mcp, key, "GET", path)
    assert resp.status_code == 200, resp.text
    return resp.json()
