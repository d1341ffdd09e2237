"""A buyer's room page view with its activity recording (contract §16) against getPlan of the
same plan, on PostgreSQL, as ratios to the bare Starlette floor measured in the same run.

    .venv/bin/python bench/rooms.py [--rounds N] [--seconds S]

It creates a throwaway database beside BENCH_DATABASE_URL with cpu.py's small data set (its big
plan: 20 milestones, 60 goals, 300 tasks), gives the plan a collaborator's share, a link and a
signed-in room session (rows written directly: no e-mail round trip), starts one `salesplan
serve` (1 worker, in-memory limiter, limits raised out of the way), and drives with wrk at 64
connections, alternating, `--rounds` times: GET /rooms/{token} with the room cookie (the page:
the link, the room session and the room's stamp read, the kept page filled in), POST
/rooms/{token}/views (the page's view beacon: `lastViewedAt` kept to the minute and, once per
30 minutes, a `viewed` activity row and its events) and GET /api/v1/plans/{planId} (getPlan,
ETag-cached body). A view is the page and its beacon: its cost is the sum of their costs per
request (inverse throughputs). The issue's target: a view ≤ 1.5 times getPlan's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import HUGE, SECRET, make_data
from harness import Server, WrkResult, cpu_seconds, run_wrk, serve, serve_floor, settle
from run import create_database, drop_database
from tails import line

# Connections: a big plan's room page takes ~100 ms here; at 64 connections every request
# would wait past wrk's 2 s timeout. The floor is measured at the same count.
C = 8


SMALL_PLAN = {  # a room's usual size: 3 milestones of 5 tasks, a goal each
    "name": "Small plan",
    "entityType": "USER",
    "milestones": [
        {
            "milestone": {"name": f"Step {i}"},
            "goals": [{"title": f"Goal {i}", "goalType": "MILESTONE_BASED"}],
            "tasks": [{"title": f"Task {i}.{j}", "targetDate": "2031-01-15"} for j in range(5)],
        }
        for i in range(3)
    ],
}


async def small_plan(url: str, data: dict[str, Any]) -> str:
    from sqlalchemy import select
    from sqlalchemy.ext.asyncio import create_async_engine

    from salesplan.auth.principal import RequestContext
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.models.plans import Plan
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    engine = create_async_engine(url)
    async with create_sessionmaker(engine, handlers())() as session:
        big = await session.get(Plan, uuid.UUID(data["plan"]))
        assert big is not None and big.user_id is not None
        ctx = RequestContext.internal(uuid.UUID(data["org"]), big.user_id)
        body = PlanCreate.model_validate(SMALL_PLAN | {"entityId": str(big.user_id)})
        plan = await create_plan(session, ctx, body)
        await session.commit()
        assert (await session.execute(select(Plan.id).where(Plan.id == plan))).scalar_one()
    await engine.dispose()
    return str(plan)


async def make_room(url: str, data: dict[str, Any], plan_id: str) -> tuple[str, str]:
    """A share of the plan with a link and a room session: (link token, Cookie header)."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from salesplan.auth.tokens import token_hash
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.kit.clock import utcnow
    from salesplan.models.rooms import PlanShare, PlanShareLink, PlanShareSession
    from salesplan.rooms.access import SESSION_TTL, cookie_name

    engine = create_async_engine(url)
    token, raw = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    org = uuid.UUID(data["org"])
    async with create_sessionmaker(engine, handlers())() as session:
        share = PlanShare(
            organization_id=org,
            plan_id=uuid.UUID(plan_id),
            contact_id=uuid.UUID(data["contact"]),
            email="ada@example.com",
            role="collaborator",
        )
        session.add(share)
        await session.flush()
        session.add(
            PlanShareLink(token_hash=token_hash(token), share_id=share.id, organization_id=org)
        )
        session.add(
            PlanShareSession(
                organization_id=org,
                share_id=share.id,
                session_hash=token_hash(raw),
                expires_at=utcnow() + SESSION_TTL,
            )
        )
        await session.commit()
        cookie = f"{cookie_name(share.id)}={raw}"
    await engine.dispose()
    return token, cookie


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    auth: str = ""
    extra: str = ""
    method: str = "GET"
    body: str | None = None

    def run(self, server: Server, seconds: int) -> tuple[WrkResult, float]:
        """wrk's result and the server's CPU milliseconds per request (a figure that holds on
        a busy machine, where req/s swings)."""
        pids = server.pids()
        before = sum(cpu_seconds(pids))
        result = run_wrk(
            server.url + self.path,
            connections=C,
            seconds=seconds,
            auth=self.auth,
            method=self.method,
            body=self.body,
            extra=self.extra,
        )
        return result, 1000 * (sum(cpu_seconds(pids)) - before) / max(result.requests, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    from salesplan.ratelimit.policy import GROUPS

    url = asyncio.run(create_database())
    try:
        data = asyncio.run(make_data(url, 2000))
        plans = {"big": data["plan"], "small": asyncio.run(small_plan(url, data))}
        rooms = {size: asyncio.run(make_room(url, data, plan)) for size, plan in plans.items()}
        auth = f"Bearer {data['key']}"
        env = {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": SECRET,
            "SALESPLAN_RATE_LIMITS": json.dumps({g: {"read": HUGE, "write": HUGE} for g in GROUPS}),
            "SALESPLAN_REDIS_URL": "",
        }
        with serve_floor(1) as bare:
            run_wrk(bare.url + "/floor", connections=C, seconds=2)
            floor = run_wrk(bare.url + "/floor", connections=C, seconds=args.seconds)
        print(line("bare floor", C, floor), flush=True)
        with serve(env) as server:
            scenarios: list[Scenario] = []
            for size, plan in plans.items():
                token, cookie = rooms[size]
                with httpx.Client(base_url=server.url, headers={"Cookie": cookie}) as browser:
                    first = browser.get(f"/rooms/{token}")
                    assert first.status_code == 200, (first.status_code, first.text[:2000])
                    csrf = re.search(r'name="csrf_token" value="([^"]+)"', first.text)
                    assert csrf is not None and "sp_csrf" in first.cookies
                    cookies = f"{cookie}; sp_csrf={first.cookies['sp_csrf']}"
                room_lua = f'wrk.headers["Cookie"] = "{cookie}"\n'
                beacon_lua = (
                    f'wrk.headers["Cookie"] = "{cookies}"\n'
                    'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n'
                )
                scenarios += [
                    Scenario(f"room page {size}", f"/rooms/{token}", extra=room_lua),
                    Scenario(
                        f"view beacon {size}",
                        f"/rooms/{token}/views",
                        extra=beacon_lua,
                        method="POST",
                        body=f"csrf_token={csrf.group(1)}",
                    ),
                    Scenario(f"getPlan {size}", f"/api/v1/plans/{plan}", auth=auth),
                ]
            ratios: dict[str, list[float]] = {s.name: [] for s in scenarios}
            cpu: dict[str, list[float]] = {s.name: [] for s in scenarios}
            for scenario in scenarios:  # warm-up
                scenario.run(server, 2)
            for _ in range(args.rounds):
                for scenario in scenarios:
                    r, ms = scenario.run(server, args.seconds)
                    assert r.non_2xx == 0 and r.rps > 0, (scenario.name, r)
                    ratios[scenario.name].append(r.rps / floor.rps)
                    cpu[scenario.name].append(ms)
                    print(f"{line(scenario.name, C, r, floor.rps)}  {ms:.3f} CPU ms", flush=True)
                    settle()
        median = {n: sorted(v)[len(v) // 2] for n, v in ratios.items()}
        cpu_ms = {n: sorted(v)[len(v) // 2] for n, v in cpu.items()}
        for size in plans:
            page, beacon = median[f"room page {size}"], median[f"view beacon {size}"]
            plan = median[f"getPlan {size}"]
            # Costs per request are inverse throughputs: a view is the page and its beacon.
            view = plan * (1 / page + 1 / beacon)
            print(
                f"{size} plan, median ratio to the bare floor: room page {page:.4f}, view beacon "
                f"{beacon:.4f}, getPlan {plan:.4f}; the page costs {plan / page:.2f} times a "
                f"getPlan, a view (page + beacon) {view:.2f} times (target <= 1.5)",
                flush=True,
            )
            page_ms, beacon_ms = cpu_ms[f"room page {size}"], cpu_ms[f"view beacon {size}"]
            plan_ms = cpu_ms[f"getPlan {size}"]
            print(
                f"{size} plan, median server CPU per request: room page {page_ms:.3f} ms, view "
                f"beacon {beacon_ms:.3f} ms, getPlan {plan_ms:.3f} ms; the page costs "
                f"{page_ms / plan_ms:.2f} times a getPlan, a view (page + beacon) "
                f"{(page_ms + beacon_ms) / plan_ms:.2f} times",
                flush=True,
            )
    finally:
        asyncio.run(drop_database(url))


if __name__ == "__main__":
    main()
