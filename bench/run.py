"""The benchmark: one run on PostgreSQL (+ Redis), figures against the floor.

    make bench          # full data (100,000 plans, 1,000 big; 20,000 accounts), ~6 minutes
    make bench-quick    # small data, 1 s wrk runs, ~75 s (a smoke test)

    .venv/bin/python bench/run.py [--quick] [--seconds N] [--keep]

Environment: BENCH_DATABASE_URL (a PostgreSQL URL whose server is used to CREATE a throwaway
database; default postgresql+asyncpg://postgres@127.0.0.1:5432/test), BENCH_REDIS_URL (default
redis://127.0.0.1:6379/0; keys under a unique prefix).

What it does: creates its own database, migrates it, generates data with INSERT … SELECT
generate_series (big plans are one plan built by the service, cloned in SQL), creates a
full-scope API key, starts `salesplan serve` (1 worker in-memory limiter, 1 worker Redis limiter,
2 workers Redis limiter) with every rate-limit group raised out of the way, and drives it with wrk
at 64 connections and at 1 connection. Prints a table with the ratio of each to the floor: a bare
Starlette app with one JSON route (bench/floor_app.py), served by uvicorn in its own process with
the same worker count, measured in the same run. The app's own `/_bench/floor` (no auth, no
database, but every middleware and the route table) is a second line, the cost of our stack, writes bench/results/latest.json and the EXPLAIN
ANALYZE of the list queries to bench/results/explain.txt, and drops its database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Table, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (
    ROOT,
    Server,
    WrkResult,
    cpu_seconds,
    ensure_wrk,
    run_wrk,
    serve,
    serve_floor,
    settle,
)

from plans import big_plan_body

BASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
SECRET = "bench-secret-key-" + uuid.uuid4().hex
HUGE = 1_000_000_000
RESULTS = ROOT / "bench" / "results"


@dataclass
class Scale:
    plans: int
    big_plans: int
    accounts: int
    contacts_per_account: int
    noise_plans: int
    noise_accounts: int
    seconds: int  # wrk duration at 64 connections
    seconds_single: int  # wrk duration at 1 connection


FULL = Scale(100_000, 1_000, 20_000, 2, 20_000, 5_000, 8, 4)
QUICK = Scale(5_000, 20, 2_000, 2, 1_000, 500, 1, 1)


# --- database -----------------------------------------------------------------------------------


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


def _clone_sql(table: Table, where: str, renamed: dict[str, str] | None = None) -> str:
    """INSERT … SELECT copying the template plan's rows `n` times; ids (and the references
    between the copied rows) become md5(old id || copy number), so the tree stays consistent."""
    mapped = {"id", "plan_id", "milestone_id", "parent_goal_id"}
    cols, exprs = [], []
    for col in table.columns:
        cols.append(col.name)
        if col.name in mapped:
            exprs.append(
                f"CASE WHEN t.{col.name} IS NULL THEN NULL "
                f"ELSE md5(t.{col.name}::text || g::text)::uuid END"
            )
        elif renamed and col.name in renamed:
            exprs.append(renamed[col.name])
        else:
            exprs.append(f"t.{col.name}")
    return (
        f"INSERT INTO {table.name} ({', '.join(cols)}) SELECT {', '.join(exprs)} "
        f"FROM {table.name} t CROSS JOIN generate_series(1, :n) g WHERE {where}"
    )


async def generate_org(
    engine: AsyncEngine, name: str, *, plans: int, big: int, accounts: int, contacts: int
) -> dict[str, Any]:
    from salesplan.auth.principal import RequestContext
    from salesplan.auth.tokens import create_api_key
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
    from salesplan.organizations.service import add_user, create_organization
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    async with create_sessionmaker(engine, handlers())() as session:
        org = await create_organization(session, name=name)
        user = await add_user(
            session,
            organization_id=org.id,
            email=f"bench-{uuid.uuid4().hex[:6]}@example.com",
            password="bench-pass",
            role="admin",
        )
        _, key = await create_api_key(session, user_id=user.id, name="bench")
        await session.flush()
        params = {"org": org.id, "user": user.id}
        # Plans: distinct, increasing created_at (1 ms apart), all owned by the user.
        await session.execute(
            text(
                """
                INSERT INTO plans (id, organization_id, name, description, entity_type, entity_id,
                                   user_id, created_at, updated_at)
                SELECT gen_random_uuid(), :org, 'Plan ' || g, NULL, 'USER', :user, :user,
                       now() - interval '1 millisecond' * (:n - g + 10),
                       now() - interval '1 millisecond' * (:n - g + 10)
                FROM generate_series(1, :n) AS g
                """
            ),
            params | {"n": plans - big},
        )
        big_id = None
        if big:
            ctx = RequestContext.internal(org.id, user.id)
            big_id = await create_plan(
                session, ctx, PlanCreate.model_validate(big_plan_body(user.id))
            )
            await session.flush()
            if big > 1:
                where = {"plans": "t.id = :tpl"}
                for model in (Plan, PlanMilestone, PlanGoal, PlanTask):
                    table = model.__table__
                    assert isinstance(table, Table)
                    renamed = {"name": "t.name || ' ' || g"} if model is Plan else None
                    await session.execute(
                        text(_clone_sql(table, where.get(table.name, "t.plan_id = :tpl"), renamed)),
                        {"n": big - 1, "tpl": big_id},
                    )
        # Accounts, each with its default buying group and `contacts` contacts.
        await session.execute(
            text(
                """
                INSERT INTO accounts (id, organization_id, name, domain, website, industry, crm_id,
                                      annual_revenue, employee_count, created_at, updated_at)
                SELECT gen_random_uuid(), :org, 'Account ' || g, 'a' || g || '.example',
                       'https://a' || g || '.example', 'Software', 'CRM-' || g,
                       1000 + g, g % 5000,
                       now() - interval '1 millisecond' * (:n - g + 10),
                       now() - interval '1 millisecond' * (:n - g + 10)
                FROM generate_series(1, :n) AS g
                """
            ),
            params | {"n": accounts},
        )
        await session.execute(
            text(
                """
                INSERT INTO buying_groups (id, organization_id, account_id, name, is_default,
                                           created_at, updated_at)
                SELECT gen_random_uuid(), organization_id, id, name || ' buying group', true,
                       created_at, updated_at
                FROM accounts WHERE organization_id = :org
                """
            ),
            params,
        )
        await session.execute(
            text(
                """
                INSERT INTO contacts (id, organization_id, account_id, first_name, last_name,
                                      email, title, created_at, updated_at)
                SELECT gen_random_uuid(), a.organization_id, a.id, 'First' || c, a.name,
                       'c' || c || '@' || a.domain, 'VP', a.created_at, a.updated_at
                FROM accounts a CROSS JOIN generate_series(1, :c) c
                WHERE a.organization_id = :org
                """
            ),
            params | {"c": contacts},
        )
        await session.commit()
        account = (
            await session.execute(
                text(
                    "SELECT id FROM accounts WHERE organization_id = :org "
                    "ORDER BY created_at DESC LIMIT 1 OFFSET :o"
                ),
                params | {"o": accounts // 2},
            )
        ).scalar_one()
        contact = (
            await session.execute(
                text("SELECT id FROM contacts WHERE account_id = :a LIMIT 1"), {"a": account}
            )
        ).scalar_one()
        task = None
        if big_id is not None:
            task = (
                await session.execute(
                    text(
                        "SELECT id FROM plan_tasks WHERE plan_id = :p ORDER BY created_at, id LIMIT 1"
                    ),
                    {"p": big_id},
                )
            ).scalar()
        # The row where page 1,000 (limit 50) starts, in createdAt order.
        deep_offset = min(999 * 50, max(plans - 60, 0))
        deep = (
            await session.execute(
                text(
                    "SELECT created_at, id FROM plans WHERE organization_id = :org "
                    "AND archived_at IS NULL ORDER BY created_at, id OFFSET :o LIMIT 1"
                ),
                params | {"o": deep_offset - 1},
            )
        ).one()
    return {
        "org": org.id,
        "user": user.id,
        "key": key,
        "big": big_id,
        "task": task,
        "account": account,
        "contact": contact,
        "deep": tuple(deep),
        "deep_page": deep_offset // 50 + 1,
    }


async def explain(engine: AsyncEngine, data: dict[str, Any]) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the list queries the benchmark drives, as the app sends
    them (the statements are compiled from the services' own query builders)."""
    queries = {
        "listAccounts, first page (limit 50)": (
            "SELECT * FROM accounts WHERE organization_id = :org AND archived_at IS NULL "
            "ORDER BY created_at, id LIMIT 51",
            {},
        ),
        "listPlans, first page (limit 50)": (
            "SELECT * FROM plans WHERE organization_id = :org AND archived_at IS NULL "
            "ORDER BY created_at, id LIMIT 51",
            {},
        ),
        f"listPlans, cursor page {data['deep_page']} (limit 50)": (
            "SELECT * FROM plans WHERE organization_id = :org AND archived_at IS NULL "
            "AND (created_at, id) > (:c, :i) "
            "ORDER BY created_at, id LIMIT 51",
            {"c": data["deep"][0], "i": data["deep"][1]},
        ),
        "getPlan children (tasks of one plan)": (
            "SELECT * FROM plan_tasks WHERE plan_id = :p AND organization_id = :org "
            "AND archived_at IS NULL ORDER BY created_at, id",
            {"p": data["big"]},
        ),
    }
    out = []
    async with engine.connect() as conn:
        for label, (sql, extra) in queries.items():
            rows = (
                await conn.execute(
                    text("EXPLAIN (ANALYZE, BUFFERS) " + sql), {"org": data["org"]} | extra
                )
            ).scalars()
            out.append(f"-- {label}\n{sql}\n" + "\n".join(rows))
    return "\n\n".join(out)


# --- driving --------------------------------------------------------------------------------


@dataclass
class Figure:
    name: str
    config: str
    rps: float
    p50_ms: float
    p99_ms: float
    p50_1c_ms: float
    p99_1c_ms: float
    errors: int
    non_2xx: int
    rss_mb: list[float]
    cpu_ms: float = float("nan")  # server CPU (user + system) per request at 64 connections


LUA_TOGGLE = """
counter = 0
request = function()
  counter = counter + 1
  local body = counter % 2 == 0 and '{"completed": true}' or '{"completed": false}'
  return wrk.format(nil, nil, nil, body)
end
"""


def measure(
    server: Server,
    config: str,
    name: str,
    path: str,
    scale: Scale,
    auth: str,
    *,
    method: str = "GET",
    body: str | None = None,
    lua: str = "",
    single: bool = True,
) -> Figure:
    url = server.url + path
    pids = server.pids()
    cpu_before = sum(cpu_seconds(pids))
    loaded = run_wrk(
        url, connections=64, seconds=scale.seconds, auth=auth, method=method, body=body, extra=lua
    )
    cpu_ms = 1000 * (sum(cpu_seconds(pids)) - cpu_before) / max(loaded.requests, 1)
    one: WrkResult | None = None
    if single:
        settle()
        one = run_wrk(
            url,
            connections=1,
            seconds=scale.seconds_single,
            auth=auth,
            method=method,
            body=body,
            extra=lua,
        )
    nan = float("nan")
    fig = Figure(
        name,
        config,
        loaded.rps,
        loaded.p50_ms,
        loaded.p99_ms,
        one.p50_ms if one else nan,
        one.p99_ms if one else nan,
        loaded.errors + (one.errors if one else 0),
        loaded.non_2xx + (one.non_2xx if one else 0),
        [round(r, 1) for r in server.worker_rss_mb()],
        cpu_ms,
    )
    print(
        f"  {config:10} {name:34} {fig.rps:9.0f} req/s  p50 {fig.p50_ms:6.2f}  p99 {fig.p99_ms:6.2f}"
        f"  | 1c p50 {fig.p50_1c_ms:5.2f} p99 {fig.p99_1c_ms:5.2f}  non2xx {fig.non_2xx}"
        f"  rss {fig.rss_mb}  cpu {fig.cpu_ms:.3f} ms/req",
        flush=True,
    )
    if fig.non_2xx:
        # Error answers are fast and inflate req/s: say what they are. A 503 here is usually
        # the pool timeout (64 connections > pool_size + max_overflow), after which the app
        # answers 503 to everything for DatabaseHealth's pause.
        probe = httpx.request(method, url, headers={"Authorization": auth}, timeout=30)
        print(
            f"  {config:10} {name:34} WARNING {fig.non_2xx} non-2xx answers; "
            f"a request now answers {probe.status_code} {probe.text[:120]}",
            flush=True,
        )
    return fig


def check(server: Server, auth: str, org: uuid.UUID, path: str, method: str = "GET") -> None:
    resp = httpx.request(
        method,
        server.url + path,
        headers={"Authorization": auth, "X-Organization-Id": str(org)},
        json={"completed": True}
        if "tasks" in path
        else ({"supportStatus": "champion"} if method == "PATCH" else None),
        timeout=30,
    )
    if resp.status_code != 200:
        raise SystemExit(f"{method} {path} → {resp.status_code}: {resp.text[:400]}")


def prepare_map(server: Server, headers: dict[str, str], data: dict[str, Any]) -> str:
    resp = httpx.post(
        server.url + "/api/v1/relationship-maps",
        headers=headers,
        json={"entityType": "Account", "entityId": str(data["account"])},
        timeout=30,
    )
    if resp.status_code not in (200, 201):
        raise SystemExit(f"createRelationshipMap → {resp.status_code}: {resp.text[:400]}")
    body = resp.json()
    return str((body.get("buyerMap") or body)["id"])


def run_config(
    config: str,
    env: dict[str, str],
    workers: int,
    scale: Scale,
    data: dict[str, Any],
    paths: dict[str, str],
    *,
    reads_only: bool,
) -> list[Figure]:
    auth = f"Bearer {data['key']}"
    figures: list[Figure] = []
    # The floor: a bare Starlette app, same server program and worker count, its own process,
    # measured in this run just before the app (never both at once on this machine's 2 cores).
    with serve_floor(workers) as bare:
        for _ in range(20 * workers):
            httpx.get(bare.url + "/floor", timeout=30)
        figures.append(measure(bare, config, "floor", "/floor", scale, ""))
    with serve(env, workers=workers) as server:
        headers = {"Authorization": auth, "X-Organization-Id": str(data["org"])}
        for path in paths.values():
            check(server, auth, data["org"], path)
        # Warm each worker's caches (principal cache, statement caches).
        for _ in range((5 if scale is QUICK else 20) * workers):
            for path in paths.values():
                httpx.get(server.url + path, headers=headers, timeout=30)
        # Our own stack's cost with no auth and no database: middleware and routing.
        figures.append(measure(server, config, IN_APP_FLOOR, "/_bench/floor", scale, ""))
        for name, path in paths.items():
            figures.append(measure(server, config, name, path, scale, auth))
        if not reads_only:
            task_path = f"/api/v1/plans/{data['big']}/tasks/{data['task']}"
            check(server, auth, data["org"], task_path, "PATCH")
            figures.append(
                measure(
                    server,
                    config,
                    "updatePlanTask (toggle)",
                    task_path,
                    scale,
                    auth,
                    method="PATCH",
                    lua=LUA_TOGGLE,
                )
            )
            # Made once, in the first configuration; the SQLite copy carries it.
            map_id = data.get("map") or prepare_map(server, headers, data)
            data["map"] = map_id
            map_path = f"/api/v1/relationship-maps/{map_id}/contacts/{data['contact']}"
            check(server, auth, data["org"], map_path, "PATCH")
            figures.append(
                measure(
                    server,
                    config,
                    "upsertRelationshipMapContact",
                    map_path,
                    scale,
                    auth,
                    method="PATCH",
                    body='{"supportStatus": "champion"}',
                )
            )
    return figures


# --- report ----------------------------------------------------------------------------------

IN_APP_FLOOR = "in-app floor (middleware+routing)"

TARGETS = {
    "getAccount": (0.07, 2.0),
    "listAccounts (page 50)": (0.05, 3.0),
    "getPlan (big)": (0.035, 5.0),
    "listPlans page 1": (0.05, 3.0),
    "listPlans cursor deep": (0.05, 3.0),
    "updatePlanTask (toggle)": (0.03, None),
    "upsertRelationshipMapContact": (0.03, None),
}


# The embedded default (`make run`): getAccount at >= 0.05 of the bare floor.
SQLITE_TARGETS = {"getAccount": 0.05}


def _target(config: str, name: str) -> float | None:
    if config == "1w-memory":
        return TARGETS.get(name, (None, None))[0]
    if config == "1w-sqlite":
        return SQLITE_TARGETS.get(name)
    return None


def report(figures: list[Figure]) -> list[str]:
    floors = {f.config: f.rps for f in figures if f.name == "floor"}
    lines = [
        f"{'config':10} {'endpoint':34} {'req/s':>9} {'ratio':>6} {'target':>6} "
        f"{'p50@64':>7} {'p99@64':>7} {'p50@1':>6} {'p99@1':>6} {'p99 tgt':>7} {'RSS MB':>12}"
        f" {'cpu ms':>7} {'cpu x':>6}"
    ]
    cpu_floors = {f.config: f.cpu_ms for f in figures if f.name == "floor"}
    for f in figures:
        ratio = f.rps / floors[f.config] if floors.get(f.config) else float("nan")
        target, p99t = _target(f.config, f.name), TARGETS.get(f.name, (None, None))[1]
        lines.append(
            f"{f.config:10} {f.name:34} {f.rps:9.0f} {ratio:6.3f} "
            f"{(f'{target:.3f}' if target else ''):>6} "
            f"{f.p50_ms:7.2f} {f.p99_ms:7.2f} {f.p50_1c_ms:6.2f} {f.p99_1c_ms:6.2f} "
            f"{(f'{p99t:.0f}' if p99t else ''):>7} {'/'.join(str(r) for r in f.rss_mb):>12}"
            f" {f.cpu_ms:7.3f} {f.cpu_ms / cpu_floors.get(f.config, float('nan')):6.1f}"
            + (f"  ! {f.non_2xx} non-2xx: req/s not comparable" if f.non_2xx else "")
        )
    by = {(f.config, f.name): f for f in figures}
    first, deep = (
        by.get(("1w-memory", "listPlans page 1")),
        by.get(("1w-memory", "listPlans cursor deep")),
    )
    if first and deep and deep.rps:
        lines.append(
            f"cursor page deep vs page 1 (time per request at 64c): "
            f"{first.rps / deep.rps:.2f}x (target <= 1.2x)"
        )
    reads = [n for n in TARGETS if not n.startswith(("update", "upsert"))]
    for name in reads:
        one, two = by.get(("1w-redis", name)), by.get(("2w-redis", name))
        if one and two and one.rps:
            lines.append(
                f"2 workers / 1 worker (Redis limiter), {name}: {two.rps / one.rps:.2f}x (target >= 1.7x)"
            )
    return lines


async def prepare(scale: Scale) -> tuple[str, dict[str, Any], str, float]:
    url = await create_database()
    print(f"bench: database {make_url(url).database}", flush=True)
    started = time.perf_counter()
    try:
        data, plan_text = await _generate(url, scale)
    except BaseException:
        await drop_database(url)
        raise
    return url, data, plan_text, time.perf_counter() - started


async def _generate(url: str, scale: Scale) -> tuple[dict[str, Any], str]:
    from salesplan.migrate import upgrade

    await asyncio.to_thread(upgrade, url)
    engine = create_async_engine(url)
    data = await generate_org(
        engine,
        "Bench org",
        plans=scale.plans,
        big=scale.big_plans,
        accounts=scale.accounts,
        contacts=scale.contacts_per_account,
    )
    await generate_org(
        engine,
        "Noise org",
        plans=scale.noise_plans,
        big=0,
        accounts=scale.noise_accounts,
        contacts=1,
    )
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE"))
    plan_text = await explain(engine, data)
    await engine.dispose()
    return data, plan_text


async def copy_to_sqlite(url: str, path: Path) -> tuple[str, float]:
    """The embedded default with the same data: a SQLite file migrated by our migrations, every
    table copied row for row from the PostgreSQL database (same ids, same API key, same cursor),
    so that the two engines' figures compare request for request."""
    from sqlalchemy import select

    from salesplan.migrate import upgrade
    from salesplan.models import Base

    started = time.perf_counter()
    for leftover in path.parent.glob(path.name + "*"):
        leftover.unlink()
    target = f"sqlite+aiosqlite:///{path}"
    await asyncio.to_thread(upgrade, target)
    source, sink = create_async_engine(url), create_async_engine(target)
    try:
        async with source.connect() as src, sink.begin() as dst:
            for table in Base.metadata.sorted_tables:
                result = await src.stream(select(table))
                async for rows in result.mappings().partitions(5_000):
                    await dst.execute(table.insert(), [dict(row) for row in rows])
            await dst.execute(text("ANALYZE"))
    finally:
        await source.dispose()
        await sink.dispose()
    return target, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the database (prints its URL)")
    parser.add_argument(
        "--no-sqlite", action="store_true", help="skip the embedded default (SQLite) configuration"
    )
    args = parser.parse_args()
    scale = QUICK if args.quick else FULL
    if args.seconds:
        scale.seconds = args.seconds
        scale.seconds_single = max(1, args.seconds // 2)
    ensure_wrk()
    url, data, plan_text, load_s = asyncio.run(prepare(scale))
    print(
        f"bench: generated {scale.plans:,} plans ({scale.big_plans:,} big), {scale.accounts:,} "
        f"accounts x {scale.contacts_per_account} contacts, noise org; {load_s:.0f}s",
        flush=True,
    )
    try:
        from salesplan.config import Settings
        from salesplan.kit.pagination import CursorCodec
        from salesplan.ratelimit.policy import GROUPS

        codec = CursorCodec(Settings(secret_key=SECRET, _env_file=None).signing_key)  # type: ignore[call-arg]
        # A cursor is bound to its list (path) and organization, as the server binds it.
        plans_list = f"/api/v1/plans\n{data['org']}"
        deep_cursor = codec._bound(lambda: plans_list).encode("createdAt", "asc", *data["deep"])
        paths = {
            "getAccount": f"/api/v1/accounts/{data['account']}",
            "listAccounts (page 50)": "/api/v1/accounts?limit=50",
            "getPlan (big)": f"/api/v1/plans/{data['big']}",
            "listPlans page 1": "/api/v1/plans?limit=50",
            "listPlans cursor deep": f"/api/v1/plans?limit=50&cursor={deep_cursor}",
        }
        limits = json.dumps({g: {"read": HUGE, "write": HUGE} for g in GROUPS})
        base_env = {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": SECRET,
            "SALESPLAN_RATE_LIMITS": limits,
            "SALESPLAN_REDIS_URL": "",
        }

        def redis_env() -> dict[str, str]:
            return base_env | {
                "SALESPLAN_REDIS_URL": REDIS_URL,
                "SALESPLAN_REDIS_PREFIX": f"bench:{uuid.uuid4().hex}:",
            }

        figures: list[Figure] = []
        print("bench: 1 worker, in-memory limiter", flush=True)
        figures += run_config("1w-memory", base_env, 1, scale, data, paths, reads_only=False)
        print("bench: 1 worker, Redis limiter", flush=True)
        figures += run_config("1w-redis", redis_env(), 1, scale, data, paths, reads_only=True)
        print("bench: 2 workers, Redis limiter", flush=True)
        figures += run_config("2w-redis", redis_env(), 2, scale, data, paths, reads_only=True)
        if not args.no_sqlite:
            sqlite_path = RESULTS / "bench.sqlite3"
            RESULTS.mkdir(exist_ok=True)
            sqlite_url, copy_s = asyncio.run(copy_to_sqlite(url, sqlite_path))
            print(f"bench: 1 worker, SQLite (the same data copied in {copy_s:.0f}s)", flush=True)
            sqlite_env = base_env | {"SALESPLAN_DATABASE_URL": sqlite_url}
            try:
                figures += run_config(
                    "1w-sqlite", sqlite_env, 1, scale, data, paths, reads_only=False
                )
            finally:
                for leftover in RESULTS.glob(sqlite_path.name + "*"):
                    leftover.unlink()
    finally:
        if args.keep:
            print(f"bench: kept {url}")
        else:
            asyncio.run(drop_database(url))
    lines = report(figures)
    print()
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    out = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "mode": "quick" if args.quick else "full",
        "scale": asdict(scale),
        "load_seconds": round(load_s, 1),
        "figures": [asdict(f) for f in figures],
        "table": lines,
    }
    (RESULTS / "latest.json").write_text(json.dumps(out, indent=2, default=str) + "\n")
    (RESULTS / "explain.txt").write_text(plan_text + "\n")
    print(f"\nbench: wrote {RESULTS / 'latest.json'} and {RESULTS / 'explain.txt'}")


if __name__ == "__main__":
    main()
