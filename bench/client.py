"""The Python client's overhead per call (clients/python, contract §17): getAccount against a
live `salesplan serve`, one call at a time on one kept-alive connection, through
`client.accounts.get(id)` (request building, retries' bookkeeping, error mapping, the pydantic
model with its Decimal and datetimes) and through bare httpx (`get(url).json()`), in
alternating short rounds (so that a busy machine's swings fall on both alike). Prints wall µs
per call, this process's CPU µs per call (what the client itself costs, the server being
another process) and the client's extra in percent of a bare call.

    .venv/bin/python bench/client.py [--calls 250] [--rounds 20] [--async] \
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]

Without `--database-url` the server runs on a throwaway SQLite file (the embedded default);
with one, on a throwaway database created beside it and dropped at the end.
"""

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
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from salesplan_client import AsyncSalesplan, Salesplan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import BIN, serve

UNLIMITED = json.dumps({group: {"read": 10**9, "write": 10**9} for group in ("accounts",)})


@contextmanager
def database(url: str | None) -> Iterator[dict[str, str]]:
    """The server's environment on a throwaway database, migrated, with the demo user's key."""
    with tempfile.TemporaryDirectory(prefix="salesplan-bench-client-") as folder:
        if url is None:
            target, drop = f"sqlite+aiosqlite:///{folder}/bench.db", None
        else:
            from sqlalchemy.engine import make_url

            base = make_url(url)
            name = f"salesplan_bench_{uuid.uuid4().hex[:10]}"
            _admin(base, f'CREATE DATABASE "{name}"')
            target = base.set(database=name).render_as_string(hide_password=False)
            drop = (base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        env = {
            "SALESPLAN_DATA_DIR": folder,
            "SALESPLAN_DATABASE_URL": target,
            "SALESPLAN_SECRET_KEY": "bench-client-not-a-secret",
            "SALESPLAN_RATE_LIMITS": UNLIMITED,
        }
        try:
            run = {"env": os.environ | env, "capture_output": True, "text": True, "check": True}
            subprocess.run([str(BIN / "salesplan"), "migrate"], **run)  # type: ignore[call-overload]
            demo = subprocess.run([str(BIN / "salesplan"), "demo"], **run)  # type: ignore[call-overload]
            env["BENCH_API_KEY"] = json.loads(demo.stdout)["apiKey"]
            yield env
        finally:
            if drop is not None:
                _admin(*drop)


def _admin(base: Any, statement: str) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    async def go() -> None:
        engine = create_async_engine(base, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(statement))
        await engine.dispose()

    asyncio.run(go())


def timed(call: Callable[[], Any], calls: int) -> tuple[float, float]:
    """(wall µs, CPU µs of this process) per call."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        call()
    return (
        (time.perf_counter() - wall) * 1e6 / calls,
        (time.process_time() - cpu) * 1e6 / calls,
    )


async def timed_async(call: Callable[[], Any], calls: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        await call()
    return (
        (time.perf_counter() - wall) * 1e6 / calls,
        (time.process_time() - cpu) * 1e6 / calls,
    )


def measure_sync(url: str, key: str, account_id: str, calls: int, rounds: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    raw_url = f"{url}/api/v1/accounts/{account_id}"
    results: dict[str, list[tuple[float, float]]] = {"httpx": [], "client": []}
    with httpx.Client(headers=headers) as http, Salesplan(url, api_key=key) as client:
        assert http.get(raw_url).json()["id"] == account_id
        assert client.accounts.get(account_id).annual_revenue == Decimal("1234.5")
        timed(lambda: http.get(raw_url).json(), calls // 4)  # warm up both
        timed(lambda: client.accounts.get(account_id), calls // 4)
        for _ in range(rounds):
            results["httpx"].append(timed(lambda: http.get(raw_url).json(), calls))
            results["client"].append(timed(lambda: client.accounts.get(account_id), calls))
    return results


async def measure_async(
    url: str, key: str, account_id: str, calls: int, rounds: int
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    raw_url = f"{url}/api/v1/accounts/{account_id}"
    results: dict[str, list[tuple[float, float]]] = {"httpx": [], "client": []}
    async with (
        httpx.AsyncClient(headers=headers) as http,
        AsyncSalesplan(url, api_key=key) as client,
    ):

        async def raw() -> Any:
            return (await http.get(raw_url)).json()

        async def typed() -> Any:
            return await client.accounts.get(account_id)

        await timed_async(raw, calls // 4)
        await timed_async(typed, calls // 4)
        for _ in range(rounds):
            results["httpx"].append(await timed_async(raw, calls))
            results["client"].append(await timed_async(typed, calls))
    return results


def report(title: str, results: dict[str, list[tuple[float, float]]]) -> None:
    wall = {k: statistics.median(w for w, _ in v) for k, v in results.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in results.items()}
    extra = (wall["client"] - wall["httpx"]) / wall["httpx"] * 100
    print(f"{title}: getAccount, one call at a time, median of rounds")
    print(f"  {'':8} {'wall µs/call':>13} {'client CPU µs/call':>19}")
    for name in ("httpx", "client"):
        print(f"  {name:8} {wall[name]:>13.0f} {cpu[name]:>19.0f}")
    own = (cpu["client"] - cpu["httpx"]) / wall["httpx"] * 100
    print(
        f"  client overhead: {extra:+.1f} % wall per call "
        f"({wall['client'] - wall['httpx']:+.0f} µs); its own CPU: "
        f"{cpu['client'] - cpu['httpx']:+.0f} µs per call = {own:+.1f} % of a bare call's wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=250, help="calls per round and kind")
    parser.add_argument("--rounds", type=int, default=20, help="alternating rounds")
    parser.add_argument("--async", dest="use_async", action="store_true")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with database(args.database_url) as env, serve(env) as server:
        key = env["BENCH_API_KEY"]
        with Salesplan(server.url, api_key=key) as client:
            account = client.accounts.create(name="Bench", annual_revenue=Decimal("1234.50"))
        engine = "PostgreSQL" if args.database_url else "SQLite"
        report(
            f"sync, {engine}", measure_sync(server.url, key, account.id, args.calls, args.rounds)
        )
        if args.use_async:
            results = asyncio.run(
                measure_async(server.url, key, account.id, args.calls, args.rounds)
            )
            report(f"async, {engine}", results)


if __name__ == "__main__":
    main()
