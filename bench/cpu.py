"""CPU time per request of the server process: a figure that holds on a busy machine.

    .venv/bin/python bench/cpu.py [--sqlite] [--seconds N] [--connections C] [--only NAME]

Wall-clock req/s moves with whatever else runs on the machine's cores; the CPU time the server
process spends per request served moves much less. This starts one `salesplan serve` process
(1 worker, in-memory limiter, limits raised out of the way) on a small data set it creates
(PostgreSQL at BENCH_DATABASE_URL in a throwaway database, or a SQLite file with `--sqlite`),
drives each endpoint with wrk, and divides the server's user+system CPU time (from
/proc/<pid>/stat) by the requests wrk completed. The bare floor (bench/floor_app.py under
the same server program, `harness.SERVER`) is measured the same way, so `x floor` is the cost in units of the bare route.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Server, cpu_seconds, ensure_wrk, serve, serve_floor
from run import LUA_TOGGLE, prepare_map

from plans import big_plan_body

HUGE = 1_000_000_000
SECRET = "bench-cpu-secret-" + uuid.uuid4().hex


MAP_BODY = '{"supportStatus": "champion"}'


def drive(url: str, auth: str, connections: int, seconds: int, method: str = "GET") -> int:
    """Requests wrk completed (2xx/3xx checked by the caller's preflight). A PATCH of a task
    toggles its `completed` (run.py's LUA_TOGGLE); one of a map contact sends MAP_BODY."""
    wrk = ensure_wrk()
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(f'wrk.method = "{method}"\n')
        if auth:
            script.write(f'wrk.headers["Authorization"] = "{auth}"\n')
        if method == "PATCH":
            script.write('wrk.headers["Content-Type"] = "application/json"\n')
            if "/contacts/" in url:
                script.write(f"wrk.body = '{MAP_BODY}'\n")
            else:
                script.write(LUA_TOGGLE)
    out = subprocess.run(
        [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "-s", script.name, url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"(\d+) requests in", out)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if bad:
        raise SystemExit(f"{url}: {bad.group(1)} non-2xx responses")
    return int(match.group(1)) if match else 0


def measure(
    server: Server, path: str, auth: str, connections: int, seconds: int, method: str = "GET"
) -> tuple[float, float]:
    """User and system CPU milliseconds per request of the server's processes. The system
    part (loopback sockets, wake-ups) grows with the machine's load; the user part is the
    Python work and moves least."""
    pids = server.pids()
    user0, sys0 = cpu_seconds(pids)
    count = drive(server.url + path, auth, connections, seconds, method)
    user1, sys1 = cpu_seconds(pids)
    per = 1000 / max(count, 1)
    return (user1 - user0) * per, (sys1 - sys0) * per


async def make_data(url: str, accounts: int) -> dict[str, Any]:
    from sqlalchemy import insert, select
    from sqlalchemy.ext.asyncio import create_async_engine

    from salesplan.auth.principal import RequestContext
    from salesplan.auth.tokens import create_api_key
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.kit.clock import utcnow
    from salesplan.kit.ids import uuid7
    from salesplan.migrate import upgrade
    from salesplan.models.crm import Account, Contact
    from salesplan.models.plans import Plan, PlanTask
    from salesplan.organizations.service import add_user, create_organization
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    await asyncio.to_thread(upgrade, url)
    engine = create_async_engine(url)
    async with create_sessionmaker(engine, handlers())() as session:
        org = await create_organization(session, name="CPU bench")
        user = await add_user(
            session,
            organization_id=org.id,
            email=f"cpu-{uuid.uuid4().hex[:6]}@example.com",
            password="bench-pass",
            role="admin",
        )
        _, key = await create_api_key(session, user_id=user.id, name="bench")
        now = utcnow()
        rows = [
            {
                "id": uuid7(),
                "organization_id": org.id,
                "name": f"Account {i}",
                "domain": f"a{i}.example",
                "website": f"https://a{i}.example",
                "industry": "Software",
                "crm_id": f"CRM-{i}",
                "annual_revenue": 1000 + i,
                "employee_count": i % 5000,
                "created_at": now,
                "updated_at": now,
            }
            for i in range(accounts)
        ]
        await session.execute(insert(Account.__table__), rows)
        contact = uuid7()
        await session.execute(
            insert(Contact.__table__),
            [
                {
                    "id": contact,
                    "organization_id": org.id,
                    "account_id": rows[len(rows) // 2]["id"],
                    "first_name": "Ada",
                    "last_name": "Lovelace",
                    "email": "ada@example.com",
                    "created_at": now,
                    "updated_at": now,
                }
            ],
        )
        # Plans without content besides the big one, as `make bench` has them: listPlans
        # answers a full page of 50.
        await session.execute(
            insert(Plan.__table__),
            [
                {
                    "id": uuid7(),
                    "organization_id": org.id,
                    "name": f"Plan {i}",
                    "entity_type": "USER",
                    "entity_id": user.id,
                    "user_id": user.id,
                    "created_at": now - timedelta(milliseconds=100 - i),
                    "updated_at": now - timedelta(milliseconds=100 - i),
                }
                for i in range(60)
            ],
        )
        ctx = RequestContext.internal(org.id, user.id)
        plan = await create_plan(session, ctx, PlanCreate.model_validate(big_plan_body(user.id)))
        await session.commit()
        task = (
            await session.execute(select(PlanTask.id).where(PlanTask.plan_id == plan).limit(1))
        ).scalar_one()
    await engine.dispose()
    return {
        "org": str(org.id),
        "key": key,
        "account": str(rows[len(rows) // 2]["id"]),
        "plan": str(plan),
        "task": str(task),
        "contact": str(contact),
    }


@contextmanager
def small_data_set(
    sqlite: bool, prefix: str = "salesplan-cpu-"
) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """`make_data` (2,000 accounts) in a throwaway PostgreSQL database beside BENCH_DATABASE_URL
    (dropped afterwards) or a SQLite file; yields the data and the environment that serves it
    (limits raised out of the way, in-memory limiter)."""
    drop = None
    if sqlite:
        url = f"sqlite+aiosqlite:///{tempfile.mkdtemp(prefix=prefix)}/bench.db"
    else:
        from run import create_database, drop_database

        url = asyncio.run(create_database())
        drop = drop_database
    try:
        data = asyncio.run(make_data(url, 2000))
        from salesplan.ratelimit.policy import GROUPS

        yield (
            data,
            {
                "SALESPLAN_DATABASE_URL": url,
                "SALESPLAN_SECRET_KEY": SECRET,
                "SALESPLAN_RATE_LIMITS": json.dumps(
                    {g: {"read": HUGE, "write": HUGE} for g in GROUPS}
                ),
                "SALESPLAN_REDIS_URL": "",
            },
        )
    finally:
        if drop is not None:
            asyncio.run(drop(url))


def _method(name: str) -> str:
    return "PATCH" if name.startswith(("update", "upsert")) else "GET"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument(
        "--profile", metavar="FILE", help="py-spy each endpoint into FILE.<name>.txt (folded)"
    )
    parser.add_argument(
        "--native",
        action="store_true",
        help="with --profile: py-spy's native frames too (C and Cython: the driver, orjson)",
    )
    args = parser.parse_args()
    ensure_wrk()
    with small_data_set(args.sqlite) as (data, env):
        auth = f"Bearer {data['key']}"
        paths = {
            "in-app floor": ("/_bench/floor", ""),
            "getAccount": (f"/api/v1/accounts/{data['account']}", auth),
            "listAccounts page": ("/api/v1/accounts?pageSize=50", auth),
            "listAccounts cursor": ("/api/v1/accounts?limit=50", auth),
            "getPlan (big)": (f"/api/v1/plans/{data['plan']}", auth),
            "listPlans page": ("/api/v1/plans?pageSize=50", auth),
            "listPlans cursor": ("/api/v1/plans?limit=50", auth),
            "updatePlanTask": (f"/api/v1/plans/{data['plan']}/tasks/{data['task']}", auth),
            "upsertRelationshipMapContact": ("/api/v1/relationship-maps/{map}/contacts/", auth),
        }
        if args.only:
            paths = {k: v for k, v in paths.items() if any(o in k for o in args.only)}
        results: dict[str, tuple[float, float]] = {}
        with serve_floor(1) as bare:
            for _ in range(50):
                httpx.get(bare.url + "/floor")
            results["bare floor"] = measure(bare, "/floor", "", args.connections, args.seconds)
        with serve(env) as server:
            if "upsertRelationshipMapContact" in paths:
                map_id = prepare_map(server, {"Authorization": auth}, data)
                paths["upsertRelationshipMapContact"] = (
                    f"/api/v1/relationship-maps/{map_id}/contacts/{data['contact']}",
                    auth,
                )
            for name, (path, token) in paths.items():
                for _ in range(30):
                    resp = httpx.request(
                        _method(name),
                        server.url + path,
                        headers=({"Authorization": token} if token else {})
                        | {"Content-Type": "application/json"},
                        content=(MAP_BODY if "/contacts/" in path else '{"completed": true}')
                        if _method(name) == "PATCH"
                        else None,
                    )
                    if resp.status_code != 200:
                        raise SystemExit(f"{path}: {resp.status_code} {resp.text[:300]}")
            for name, (path, token) in paths.items():
                spy = None
                if args.profile:
                    out = f"{args.profile}.{re.sub(r'[^a-zA-Z]+', '_', name)}.txt"
                    spy = subprocess.Popen(
                        [
                            str(Path(sys.executable).parent / "py-spy"),
                            "record",
                            "-r",
                            "400",
                            "-f",
                            "raw",
                            "-o",
                            out,
                            "-d",
                            str(args.seconds),
                            "--pid",
                            str(server.pids()[-1]),
                            *(["--native"] if args.native else []),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                results[name] = measure(
                    server, path, token, args.connections, args.seconds, _method(name)
                )
                if spy is not None:
                    spy.wait()
        floor = sum(results["bare floor"])
        engine = "sqlite" if args.sqlite else "postgresql"
        print(f"cpu per request ({engine}, wrk -t1 -c{args.connections} -d{args.seconds}s)")
        print(f"  {'':22} {'user':>7} {'sys':>7} {'total':>7} ms  {'x floor':>7}  req/s/core")
        for name, (user, system) in results.items():
            total = user + system
            print(
                f"  {name:22} {user:7.3f} {system:7.3f} {total:7.3f}     {total / floor:7.1f}"
                f"  {1000 / total:9.0f}"
            )


if __name__ == "__main__":
    main()
