"""A buyer's room page view with its activity recording (contract §16) against getPlan of the
same plan, on PostgreSQL, as ratios to the bare Starlette floor measured in the same run.

    .venv/bin/python bench/rooms.py [--rounds N] [--seconds S]

It creates a throwaway database beside BENCH_DATABASE_URL with cpu.py's small data set (its big
plan: 20 milestones, 60 goals, 300 tasks), gives the plan a collaborator's share, a link and a
signed-in room session (rows written directly: no e-mail round trip), starts one `salesplan
serve` (1 worker, in-memory limiter, limits raised out of the way), and drives with wrk at 64
connections, alternating, `--rounds` times: GET /rooms/{token} with the room cookie (the page,
its `lastViewedAt` stamp and, once per 30 minutes, a `viewed` activity row and its events) and
GET /api/v1/plans/{planId} (getPlan, ETag-cached body). The issue's target: room page ≤ 1.5 times
getPlan's cost, i.e. (getPlan ratio) / (room ratio) ≤ 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import HUGE, SECRET, make_data
from harness import run_wrk, serve, serve_floor, settle
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
    from salesplan.models.plans import Plan
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    engine = create_async_engine(url)
    async with create_sessionmaker(engine)() as session:
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
    from salesplan.kit.clock import utcnow
    from salesplan.models.rooms import PlanShare, PlanShareLink, PlanShareSession
    from salesplan.rooms.access import SESSION_TTL, cookie_name

    engine = create_async_engine(url)
    token, raw = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    org = uuid.UUID(data["org"])
    async with create_sessionmaker(engine)() as session:
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
            scenarios = []
            for size, plan in plans.items():
                token, cookie = rooms[size]
                first = httpx.get(f"{server.url}/rooms/{token}", headers={"Cookie": cookie})
                assert first.status_code == 200, (first.status_code, first.text[:2000])
                room_lua = f'wrk.headers["Cookie"] = "{cookie}"\n'
                scenarios += [
                    (f"room view {size}", f"/rooms/{token}", "", room_lua),
                    (f"getPlan {size}", f"/api/v1/plans/{plan}", auth, ""),
                ]
            ratios: dict[str, list[float]] = {name: [] for name, *_ in scenarios}
            for _name, path, key, lua in scenarios:  # warm-up
                run_wrk(server.url + path, connections=C, seconds=2, auth=key, extra=lua)
            for _ in range(args.rounds):
                for name, path, key, lua in scenarios:
                    r = run_wrk(
                        server.url + path, connections=C, seconds=args.seconds, auth=key, extra=lua
                    )
                    assert r.non_2xx == 0 and r.rps > 0, (name, r)
                    ratios[name].append(r.rps / floor.rps)
                    print(line(name, C, r, floor.rps), flush=True)
                    settle()
        median = {n: sorted(v)[len(v) // 2] for n, v in ratios.items()}
        for size in plans:
            room, plan = median[f"room view {size}"], median[f"getPlan {size}"]
            print(
                f"{size} plan, median ratio to the bare floor: room page view {room:.4f}, "
                f"getPlan {plan:.4f}; a room view costs {plan / room:.2f} times a getPlan "
                "(target <= 1.5)",
                flush=True,
            )
    finally:
        asyncio.run(drop_database(url))


if __name__ == "__main__":
    main()
