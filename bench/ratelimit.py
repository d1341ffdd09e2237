"""Rate-limit overhead, in one run:

1. the limiter's cost per request (`RateLimiter.consume` in a loop; median microseconds) on the
   memory store and on the Redis store;
2. the throughput of one limited route (GET /api/v1/organizations) served by `salesplan serve`
   with limiting off, on (memory) and on (Redis), driven by concurrent httpx for a bounded time.

    .venv/bin/python bench/ratelimit.py [--seconds 10] [--concurrency 16] [--redis-url URL]
        [--database-url URL]

Redis defaults to $SALESPLAN_BENCH_REDIS_URL or redis://127.0.0.1:6379/0 (keys under a unique
prefix, removed afterwards); skipped when it does not answer. The database defaults to a fresh
SQLite file in a temporary folder; PostgreSQL URLs must point at a migrated database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import httpx

from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import build_policy
from salesplan.ratelimit.store import MemoryStore, RateLimitStore, RedisStore

HUGE = 1_000_000_000  # a limit never reached: every call does the full work of an allowed unit


async def limiter_cost(store: RateLimitStore, iterations: int) -> tuple[float, float]:
    """Median and p99 microseconds of one `consume`, over 1,000 buckets."""
    limiter = RateLimiter(build_policy({"plans": {"read": HUGE}}), store)
    tokens = [uuid.uuid4() for _ in range(1000)]
    org = str(uuid.uuid4())
    for i in range(min(iterations, 2000)):  # warm up (script cache, connections)
        await limiter.consume(
            token_id=tokens[i % 1000], organization=org, group="plans", write=False
        )
    samples = []
    for i in range(iterations):
        start = time.perf_counter_ns()
        await limiter.consume(
            token_id=tokens[i % 1000], organization=org, group="plans", write=False
        )
        samples.append((time.perf_counter_ns() - start) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout)) if out.stdout.strip() else {}


async def drive(base: str, headers: dict[str, str], seconds: float, concurrency: int) -> dict:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    deadline = time.perf_counter() + seconds

    async def worker(client: httpx.AsyncClient) -> None:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            response = await client.get("/api/v1/organizations", headers=headers)
            latencies.append(time.perf_counter() - start)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        await client.get("/api/v1/organizations", headers=headers)  # warm up
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "median_ms": statistics.median(latencies) * 1000,
        "statuses": statuses,
    }


async def serve_and_drive(
    env: dict[str, str], headers: dict[str, str], seconds: float, concurrency: int
) -> dict:
    port = free_port()
    proc = subprocess.Popen(  # noqa: ASYNC220 - a bench script; starting serve is not timed
        [sys.executable, "-m", "salesplan.cli", "serve", "--port", str(port)],
        env=env | {"SALESPLAN_LOG_LEVEL": "warning"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base) as probe:
            for _ in range(300):
                try:
                    if (await probe.get("/healthz")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            else:
                raise RuntimeError("serve did not come up")
            meta = (await probe.get("/api/v1/meta")).json()["rateLimiting"]
        result = await drive(base, headers, seconds, concurrency)
        result["limiting"] = f"{'on' if meta['enabled'] else 'off'} ({meta['store']})"
        return result
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


async def redis_answers(url: str) -> bool:
    store = RedisStore(url, prefix="salesplan-bench-probe:")
    try:
        return await store.ping()
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds per setting (median kept)"
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("SALESPLAN_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"),
    )
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()

    prefix = f"salesplan-bench:{uuid.uuid4().hex}:"
    have_redis = await redis_answers(args.redis_url)

    print("== limiter cost per request (RateLimiter.consume, 1,000 buckets) ==")
    median, p99 = await limiter_cost(MemoryStore(), args.iterations)
    print(f"memory store: median {median:8.1f} µs   p99 {p99:8.1f} µs")
    if have_redis:
        store = RedisStore(args.redis_url, prefix=prefix)
        try:
            median, p99 = await limiter_cost(store, args.iterations)
            print(f"redis store:  median {median:8.1f} µs   p99 {p99:8.1f} µs  (one round trip)")
        finally:
            await store.reset()
            await store.close()
    else:
        print(f"redis store:  skipped ({args.redis_url} does not answer)")

    with tempfile.TemporaryDirectory() as tmp:
        database_url = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")} | {
            "SALESPLAN_DATABASE_URL": database_url,
            "SALESPLAN_SECRET_KEY": "bench-secret",
            "SALESPLAN_RATE_LIMITS": json.dumps({"organizations": {"read": HUGE}}),
        }
        org = cli(base_env, "admin", "create-org", "--name", "Bench")
        user = cli(
            base_env,
            "admin",
            "create-user",
            "--org",
            org["id"],
            "--email",
            f"bench-{uuid.uuid4().hex[:6]}@example.com",
            "--password",
            "bench-password",
            "--role",
            "admin",
        )
        key = cli(base_env, "admin", "create-api-key", "--user", user["id"])
        headers = {"Authorization": f"Bearer {key['key']}"}
        runs = [
            ("off", base_env | {"SALESPLAN_RATE_LIMITS_ENABLED": "false"}),
            ("memory", base_env),
        ]
        if have_redis:
            runs.append(
                (
                    "redis",
                    base_env
                    | {"SALESPLAN_REDIS_URL": args.redis_url, "SALESPLAN_REDIS_PREFIX": prefix},
                )
            )
        engine = database_url.split(":", 1)[0]
        print(
            f"\n== GET /api/v1/organizations, 1 worker, {engine}, "
            f"{args.concurrency} concurrent clients, {args.seconds:g} s each =="
        )
        # Interleaved rounds, so that load from elsewhere on the machine hits every setting alike.
        rounds: dict[str, list[dict]] = {name: [] for name, _ in runs}
        for _ in range(args.rounds):
            for name, env in runs:
                rounds[name].append(
                    await serve_and_drive(env, headers, args.seconds, args.concurrency)
                )
        results = {}
        for name, _ in runs:
            result = sorted(rounds[name], key=lambda r: r["rps"])[len(rounds[name]) // 2]
            results[name] = result
            all_rps = ", ".join(f"{r['rps']:.0f}" for r in rounds[name])
            print(
                f"limiting {result['limiting']:<16} {result['rps']:8.1f} req/s (median of "
                f"{all_rps})   median latency {result['median_ms']:6.1f} ms   {result['statuses']}"
            )
        off = results["off"]["rps"]
        for name in ("memory", "redis"):
            if name in results:
                change = (results[name]["rps"] - off) / off * 100
                print(f"throughput with {name} limiting vs off: {change:+.1f} %")
    if have_redis:
        cleanup = RedisStore(args.redis_url, prefix=prefix)
        await cleanup.reset()
        await cleanup.close()


if __name__ == "__main__":
    asyncio.run(main())
