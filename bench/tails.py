"""Tail latency at 64 connections: p50 and p99 of getAccount, listPlans, updatePlanTask (all
clients toggling one task) and upsertRelationshipMapContact (all clients writing one placement),
on PostgreSQL, for one server configuration.

    .venv/bin/python bench/tails.py [--rounds N] [--seconds S] [SALESPLAN_SETTING=value ...]

It creates a throwaway database beside BENCH_DATABASE_URL with cpu.py's small data set, starts
one `salesplan serve` (1 worker, in-memory limiter, limits raised out of the way) with the
settings given on the command line (e.g. `SALESPLAN_DB_POOL_SIZE=70` to see the pool without
contention), and drives each endpoint with wrk at 64 connections, `--rounds` times, then once at
1 connection; the bare Starlette floor is measured first in the same run, and each
64-connection figure is also given as a ratio to it. For A/B runs of two trees, run it from
each (PYTHONPATH=<tree>/src).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import HUGE, MAP_BODY, SECRET, make_data
from harness import WrkResult, run_wrk, serve, serve_floor, settle
from run import LUA_TOGGLE, create_database, drop_database, prepare_map


def line(name: str, connections: int, r: WrkResult, floor: float = 0.0) -> str:
    ratio = f"  {r.rps / floor:6.3f} of the bare floor" if floor and connections > 1 else ""
    return (
        f"{name:16} c={connections:<3} {r.rps:8.0f} req/s  p50 {r.p50_ms:8.2f}  "
        f"p99 {r.p99_ms:8.2f}  p99/p50 {r.p99_ms / max(r.p50_ms, 1e-9):5.1f}  non2xx {r.non_2xx}"
        f"{ratio}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("settings", nargs="*", help="SALESPLAN_…=value for the server")
    args = parser.parse_args()
    overrides = dict(s.split("=", 1) for s in args.settings)
    from salesplan.ratelimit.policy import GROUPS

    url = asyncio.run(create_database())
    try:
        data = asyncio.run(make_data(url, 2000))
        auth = f"Bearer {data['key']}"
        env = {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": SECRET,
            "SALESPLAN_RATE_LIMITS": json.dumps({g: {"read": HUGE, "write": HUGE} for g in GROUPS}),
            "SALESPLAN_REDIS_URL": "",
        } | overrides
        # The bare Starlette floor (harness.serve_floor), in this run, before the app: the
        # 64-connection figures are also given as a ratio to it.
        with serve_floor(1) as bare:
            run_wrk(bare.url + "/floor", connections=64, seconds=2)
            bare_floor = run_wrk(bare.url + "/floor", connections=64, seconds=args.seconds)
        print(line("bare floor", 64, bare_floor), flush=True)
        with serve(env) as server:
            plan = httpx.get(
                f"{server.url}/api/v1/plans/{data['plan']}", headers={"Authorization": auth}
            ).json()
            task = plan["tasks"][0]["id"]
            map_id = prepare_map(server, {"Authorization": auth}, data)
            scenarios = [
                ("getAccount", f"/api/v1/accounts/{data['account']}", "GET", ""),
                ("listPlans", "/api/v1/plans?limit=50", "GET", ""),
                (
                    "updatePlanTask",
                    f"/api/v1/plans/{data['plan']}/tasks/{task}",
                    "PATCH",
                    LUA_TOGGLE,
                ),
                (
                    "upsertMapContact",
                    f"/api/v1/relationship-maps/{map_id}/contacts/{data['contact']}",
                    "PATCH",
                    f"wrk.body = '{MAP_BODY}'\n",
                ),
            ]
            print(f"bench/tails.py {' '.join(args.settings) or '(defaults)'}", flush=True)
            for name, path, method, lua in scenarios:
                target = server.url + path
                run_wrk(target, connections=64, seconds=2, auth=auth, method=method, extra=lua)
                for _ in range(args.rounds):
                    r = run_wrk(
                        target,
                        connections=64,
                        seconds=args.seconds,
                        auth=auth,
                        method=method,
                        extra=lua,
                    )
                    print(line(name, 64, r, bare_floor.rps), flush=True)
                settle()
                r = run_wrk(target, connections=1, seconds=4, auth=auth, method=method, extra=lua)
                print(line(name, 1, r), flush=True)
    finally:
        asyncio.run(drop_database(url))


if __name__ == "__main__":
    main()
