"""Plans at scale on PostgreSQL: getPlan of a big plan and listPlans (first page, a cursor page
~1,000 pages deep, and page mode for contrast), with 100,000 plans in one organization.

    .venv/bin/python bench/plans.py            # BENCH_DATABASE_URL, BENCH_SECONDS, BENCH_CONCURRENCY

It creates its own database beside BENCH_DATABASE_URL (default
postgresql+asyncpg://postgres@127.0.0.1:5432/test), loads it with bulk INSERT … SELECT
generate_series, starts `salesplan serve` on a free port (rate limits off) and drives it with
concurrent httpx requests for a bounded time per scenario. Prints req/s, p50 and p99, and the
server process's CPU time per request (from /proc: what a loaded machine disturbs least)."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.config import Settings
from salesplan.kit.pagination import CursorCodec

BASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
SECONDS = float(os.environ.get("BENCH_SECONDS", "8"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "16"))
PLANS = 100_000
BIG_PLANS = 3
SECRET = "bench-secret-key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def create_database() -> str:
    base = make_url(BASE_URL)
    name = f"salesplan_bench_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str) -> None:
    u = make_url(url)
    admin = create_async_engine(
        u.set(database=make_url(BASE_URL).database), isolation_level="AUTOCOMMIT"
    )
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{u.database}" WITH (FORCE)'))
    await admin.dispose()


def big_plan_body(user_id: uuid.UUID) -> dict[str, Any]:
    """20 milestones, 60 goals (20 roots, each with a child and a grandchild), 300 tasks."""
    return {
        "name": "Big plan",
        "entityType": "USER",
        "entityId": str(user_id),
        "milestones": [
            {
                "milestone": {"name": f"Phase {i}"},
                "goals": [
                    {
                        "title": f"Goal {i}",
                        "goalType": "MILESTONE_BASED",
                        "childGoals": [
                            {
                                "title": f"Goal {i}.1",
                                "target": 100,
                                "actualValue": i,
                                "childGoals": [{"title": f"Goal {i}.1.1"}],
                            }
                        ],
                    }
                ],
                "tasks": [{"title": f"Task {i}.{j}", "completed": j % 3 == 0} for j in range(15)],
            }
            for i in range(20)
        ],
    }


async def load(url: str) -> dict[str, Any]:
    from salesplan.auth.principal import RequestContext
    from salesplan.auth.tokens import create_api_key
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.organizations.service import add_user, create_organization
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    engine = create_async_engine(url)
    started = time.perf_counter()
    async with create_sessionmaker(engine, handlers())() as session:
        org = await create_organization(session, name="Bench org")
        user = await add_user(
            session, organization_id=org.id, email="bench@example.com", password="bench-pass"
        )
        _, key = await create_api_key(session, user_id=user.id, name="bench")
        await session.flush()
        # 100,000 plans in one statement: distinct, increasing created_at.
        await session.execute(
            text(
                """
                INSERT INTO plans (id, organization_id, name, description, entity_type, entity_id,
                                   user_id, created_at, updated_at)
                SELECT gen_random_uuid(), :org, 'Plan ' || g, NULL, 'USER', :user, :user,
                       now() - interval '1 millisecond' * (:n - g),
                       now() - interval '1 millisecond' * (:n - g)
                FROM generate_series(1, :n) AS g
                """
            ),
            {"org": org.id, "user": user.id, "n": PLANS - BIG_PLANS},
        )
        ctx = RequestContext.internal(org.id, user.id)
        big_ids = [
            await create_plan(session, ctx, PlanCreate.model_validate(big_plan_body(user.id)))
            for _ in range(BIG_PLANS)
        ]
        await session.commit()
        # The row where page 1,000 (pageSize 50) starts, in createdAt order.
        deep = (
            await session.execute(
                text(
                    "SELECT created_at, id FROM plans WHERE organization_id = :org "
                    "AND archived_at IS NULL ORDER BY created_at, id OFFSET :o LIMIT 1"
                ),
                {"org": org.id, "o": 999 * 50 - 1},
            )
        ).one()
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("ANALYZE"))
        explained = {}
        keyset = (
            "SELECT * FROM plans WHERE organization_id = :org AND archived_at IS NULL {extra} "
            "ORDER BY created_at, id LIMIT 51"
        )
        for label, extra in (("first", ""), ("deep", "AND (created_at, id) > (:c, :i)")):
            plan = (
                await conn.execute(
                    text("EXPLAIN (ANALYZE, FORMAT JSON) " + keyset.format(extra=extra)),
                    {"org": org.id, "c": deep[0], "i": deep[1]},
                )
            ).scalar_one()
            top = plan[0]
            explained[label] = (top["Execution Time"], _scan(top["Plan"]))
    await engine.dispose()
    loaded = time.perf_counter() - started
    return {
        "org": org.id,
        "key": key,
        "big": big_ids[0],
        "deep": deep,
        "load_seconds": loaded,
        "explained": explained,
    }


def _scan(node: dict[str, Any]) -> str:
    """The scan under a plan's top node (Limit → Index Scan …)."""
    while "Plans" in node and node["Node Type"] not in ("Index Scan", "Seq Scan", "Sort"):
        node = node["Plans"][0]
    return f"{node['Node Type']} {node.get('Index Name', '')}".strip()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (Linux): robust to other load on the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


TOGGLE = "toggle"  # a PATCH body: {"completed": true} and false alternately


async def drive(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    server_pid: int,
    body: str | None = None,
) -> dict[str, float]:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + SECONDS
    sent = 0

    async def worker() -> None:
        nonlocal errors, sent
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            if body == TOGGLE:
                sent += 1
                resp = await client.patch(url, json={"completed": sent % 2 == 0}, headers=headers)
            else:
                resp = await client.get(url, headers=headers)
            latencies.append(time.perf_counter() - t0)
            if resp.status_code != 200:
                errors += 1

    started, cpu = time.perf_counter(), cpu_seconds(server_pid)
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(server_pid) - cpu
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "errors": errors,
        "cpu_ms": cpu / max(len(latencies), 1) * 1000,
    }


async def main() -> None:
    from salesplan.migrate import upgrade

    url = await create_database()
    print(f"database: {make_url(url).database}")
    try:
        await asyncio.to_thread(upgrade, url)
        data = await load(url)
        print(
            f"loaded {PLANS:,} plans ({BIG_PLANS} big: 20 milestones, 60 goals, 300 tasks) "
            f"in {data['load_seconds']:.1f}s"
        )
        for label, (ms, scan) in data["explained"].items():
            print(f"SQL keyset page ({label}): {ms:.2f} ms in PostgreSQL, {scan}")
        port = free_port()
        env = os.environ | {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": SECRET,
            "SALESPLAN_RATE_LIMITS_ENABLED": "false",
            "SALESPLAN_LOG_LEVEL": "warning",
        }
        server = subprocess.Popen(  # noqa: ASYNC220 - started once, before measuring
            [str(Path(sys.executable).parent / "salesplan"), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            limits = httpx.Limits(max_connections=CONCURRENCY)
            async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
                ready_by = time.perf_counter() + 60  # a loaded machine starts slowly
                while time.perf_counter() < ready_by:
                    try:
                        if (await client.get("/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    await asyncio.sleep(0.1)
                headers = {
                    "Authorization": f"Bearer {data['key']}",
                    "X-Organization-Id": str(data["org"]),
                }
                codec = CursorCodec(Settings(secret_key=SECRET, _env_file=None).signing_key)  # type: ignore[call-arg]
                created_at, row_id = data["deep"]
                # A cursor is bound to its list (path) and organization, as the server binds it.
                plans_list = f"/api/v1/plans\n{data['org']}"
                deep_cursor = codec._bound(lambda: plans_list).encode(
                    "createdAt", "asc", created_at, row_id
                )
                check = await client.get(
                    "/api/v1/plans", params={"cursor": deep_cursor, "limit": 50}, headers=headers
                )
                assert check.status_code == 200 and len(check.json()["data"]) == 50, check.text
                big = (await client.get(f"/api/v1/plans/{data['big']}", headers=headers)).json()
                assert len(big["tasks"]) == 300 and len(big["milestones"]) == 20
                scenarios = {
                    "getPlan (20 milestones, 60 goals, 300 tasks)": f"/api/v1/plans/{data['big']}",
                    "listPlans cursor, first page (limit 50)": "/api/v1/plans?limit=50",
                    "listPlans cursor, page ~1,000 (limit 50)": "/api/v1/plans?limit=50&cursor="
                    + deep_cursor,
                    "listPlans page mode, page 1 (with totalCount)": "/api/v1/plans?page=1&pageSize=50",
                    "listPlans page mode, page 1,000 (OFFSET, for contrast)": "/api/v1/plans?page=1000&pageSize=50",
                    "updatePlanTask (completed true/false)": (
                        f"/api/v1/plans/{data['big']}/tasks/{big['tasks'][0]['id']}",
                        TOGGLE,
                    ),
                }
                print(
                    f"{SECONDS:.0f}s per scenario, {CONCURRENCY} concurrent clients, 1 uvicorn worker"
                )
                print(
                    f"{'scenario':58} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} "
                    f"{'srv CPU ms/req':>14} {'req/s per core':>14}"
                )
                for label, target in scenarios.items():
                    path, body = target if isinstance(target, tuple) else (target, None)
                    r = await drive(client, path, headers, server.pid, body)
                    print(
                        f"{label:58} {r['rps']:8.1f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} "
                        f"{r['errors']:6d} {r['cpu_ms']:14.2f} {1000 / r['cpu_ms']:14.0f}"
                    )
        finally:
            server.terminate()
            server.wait(timeout=10)
    finally:
        await drop_database(url)


if __name__ == "__main__":
    asyncio.run(main())
