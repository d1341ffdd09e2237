"""MCP tools/call latency through the official SDK client: `salesplan serve` on a fresh SQLite
data folder with the demo organization, then one client session calling read tools in turn.

    .venv/bin/python bench/mcp_calls.py [--calls 300]

Prints, per tool, the median and p90 of one `tools/call` round trip (client to server and back,
the SDK's own result validation included), and the time and size of one `tools/list`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import BIN, serve
from mcp.client.streamable_http import streamable_http_client

from mcp import Client


def _demo_key(env: dict[str, str]) -> str:
    out = subprocess.run(
        [str(BIN / "salesplan"), "demo"], env=os.environ | env, capture_output=True, text=True
    )
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return str(json.loads(line)["apiKey"])
    raise SystemExit(f"no key in `salesplan demo` output:\n{out.stdout}\n{out.stderr}")


async def _run(url: str, key: str, calls: int) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url + "/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        start = time.perf_counter()
        listing = await client.list_tools()
        list_ms = (time.perf_counter() - start) * 1000
        size = len(json.dumps([t.model_dump(mode="json") for t in listing.tools]))
        start = time.perf_counter()
        await client.list_tools()
        again_ms = (time.perf_counter() - start) * 1000
        print(
            f"tools/list: first {list_ms:.1f} ms, then {again_ms:.1f} ms; "
            f"{len(listing.tools)} tools, {size} bytes"
        )
        plans = (await client.call_tool("listPlans", {})).structured_content or {}
        plan_id = plans["data"][0]["id"]
        for name, arguments in (
            ("getMeta", {}),
            ("listAccounts", {}),
            ("getPlan", {"planId": plan_id}),
        ):
            for _ in range(10):  # warm up
                await client.call_tool(name, arguments)
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                result = await client.call_tool(name, arguments)
                times.append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.content
            times.sort()
            print(
                f"tools/call {name}: median {statistics.median(times):.2f} ms, "
                f"p90 {times[int(len(times) * 0.9)]:.2f} ms ({calls} calls)"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="salesplan-mcp-bench-") as data:
        env = {"SALESPLAN_DATA_DIR": data, "SALESPLAN_RATE_LIMITS_ENABLED": "false"}
        key = _demo_key(env)
        with serve(env) as server:
            asyncio.run(_run(server.url, key, args.calls))


if __name__ == "__main__":
    main()
