"""The server in front: uvicorn against granian (its Rust HTTP stack, ASGI), for the bare floor and
for our app's hot routes, in one run, rounds alternating between the two.

    .venv/bin/python bench/servers.py [--rounds 3] [--seconds 6] [--connections 64] [--sqlite]

Creates cpu.py's small data set (2,000 accounts, 60 plans and a big one) in a throwaway
PostgreSQL database beside BENCH_DATABASE_URL (or a SQLite file with `--sqlite`). Each round
starts, for each server in turn, the bare floor (bench/floor_app.py, 1 process) and drives it,
then `salesplan serve --server <name>` (1 worker, in-memory limiter, limits raised out of the
way, access log off as in the other benches) and drives getAccount, listAccounts (limit 50),
getPlan (big) and listPlans (limit 50) with wrk at 64 connections. Prints req/s and p50/p99 of
each, each as a ratio to uvicorn's floor of the same round (the issue's unit) and to its own
server's floor, and the median over the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import small_data_set
from harness import (
    BIN,
    Server,
    WrkResult,
    _running,
    cpu_seconds,
    free_port,
    run_wrk,
    serve_floor,
    settle,
)

SERVERS = ("uvicorn", "granian")


@contextmanager
def app(server: str, env: dict[str, str]) -> Iterator[Server]:
    import os

    port = free_port()
    command = [str(BIN / "salesplan"), "serve", "--port", str(port), "--server", server]
    full = os.environ | env | {"SALESPLAN_LOG_LEVEL": "warning"}
    with _running(command, full, f"http://127.0.0.1:{port}", "/healthz") as running:
        yield running


def drive(
    running: Server, path: str, args: argparse.Namespace, auth: str = ""
) -> tuple[WrkResult, float]:
    """wrk's result and the server's CPU milliseconds per request (every process of it: a
    CPU figure holds on a busy machine where req/s swings)."""
    pids = running.pids()
    before = sum(cpu_seconds(pids))
    result = run_wrk(
        running.url + path, connections=args.connections, seconds=args.seconds, auth=auth
    )
    return result, 1000 * (sum(cpu_seconds(pids)) - before) / max(result.requests, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--sqlite", action="store_true")
    args = parser.parse_args()
    with small_data_set(args.sqlite, "salesplan-servers-") as (data, env):
        auth = f"Bearer {data['key']}"
        routes = {
            "getAccount": f"/api/v1/accounts/{data['account']}",
            "listAccounts": "/api/v1/accounts?limit=50",
            "getPlan (big)": f"/api/v1/plans/{data['plan']}",
            "listPlans": "/api/v1/plans?limit=50",
        }
        rps: dict[tuple[str, str], list[float]] = defaultdict(list)
        ratio: dict[tuple[str, str], list[float]] = defaultdict(list)
        own: dict[tuple[str, str], list[float]] = defaultdict(list)
        cpu: dict[tuple[str, str], list[float]] = defaultdict(list)
        for round_ in range(args.rounds):
            order = SERVERS if round_ % 2 == 0 else tuple(reversed(SERVERS))
            floors: dict[str, float] = {}
            results: dict[tuple[str, str], float] = {}
            for server in order:
                with serve_floor(1, server) as running:
                    for _ in range(50):
                        httpx.get(running.url + "/floor", timeout=30)
                    r, cpu_ms = drive(running, "/floor", args)
                floors[server] = r.rps
                cpu[(server, "floor")].append(cpu_ms)
                results[(server, "floor")] = r.rps
                print(
                    f"round {round_ + 1} {server:8} {'floor':14} {r.rps:8.0f} req/s  p50 "
                    f"{r.p50_ms:6.2f}  p99 {r.p99_ms:7.2f}  cpu {cpu_ms:.3f} ms",
                    flush=True,
                )
                settle()
                with app(server, env) as running:
                    for path in routes.values():
                        for _ in range(30):
                            resp = httpx.get(running.url + path, headers={"Authorization": auth})
                            assert resp.status_code == 200, resp.text[:300]
                    for name, path in routes.items():
                        r, cpu_ms = drive(running, path, args, auth)
                        assert not r.non_2xx, (server, name, r.non_2xx)
                        results[(server, name)] = r.rps
                        cpu[(server, name)].append(cpu_ms)
                        print(
                            f"round {round_ + 1} {server:8} {name:14} {r.rps:8.0f} req/s  p50 "
                            f"{r.p50_ms:6.2f}  p99 {r.p99_ms:7.2f}  cpu {cpu_ms:.3f} ms",
                            flush=True,
                        )
                settle()
            for (server, name), value in results.items():
                rps[(server, name)].append(value)
                ratio[(server, name)].append(value / floors["uvicorn"])
                own[(server, name)].append(value / floors[server])
        print(
            f"\nmedian of {args.rounds} rounds; ratios to uvicorn's bare floor of each round "
            "(and to the server's own floor)"
        )
        print(f"{'route':14} " + "  ".join(f"{s:>30}" for s in SERVERS) + "  granian/uvicorn")
        for name in ("floor", *routes):
            cells = []
            for server in SERVERS:
                key = (server, name)
                cells.append(
                    f"{statistics.median(rps[key]):8.0f} {statistics.median(ratio[key]):6.3f} "
                    f"({statistics.median(own[key]):6.3f})"
                )
            gain = statistics.median(
                g / u for g, u in zip(rps[("granian", name)], rps[("uvicorn", name)], strict=True)
            )
            print(f"{name:14} " + "  ".join(f"{c:>30}" for c in cells) + f"  {gain:6.2f}x")
        print("\nserver CPU ms per request (median), and the bare uvicorn floor's CPU over it")
        for name in ("floor", *routes):
            cells = []
            for server in SERVERS:
                ms = statistics.median(cpu[(server, name)])
                floor_ms = statistics.median(cpu[("uvicorn", "floor")])
                cells.append(f"{server} {ms:6.3f} ms ({floor_ms / ms:5.3f})")
            print(f"{name:14} " + "   ".join(cells))


if __name__ == "__main__":
    main()
