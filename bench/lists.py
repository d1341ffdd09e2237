"""Flat lists: a cursor page (the third, limit 50) of every organization-wide list, for every
`sortBy` and both orders, with 1,000 rows and with 50,000, on PostgreSQL and on SQLite.

    .venv/bin/python bench/lists.py [--engine postgresql|sqlite|both] [--small 1000]
        [--large 50000] [--requests 15] [--only NAME]

For each engine it creates two databases (PostgreSQL: throwaway databases beside
BENCH_DATABASE_URL, default postgresql+asyncpg://postgres@127.0.0.1:5432/test; SQLite: files in a
temporary folder), migrated by our migrations, each with one organization holding `--small`
(resp. `--large`) rows of every listed table (2 % archived; nullable sort keys missing on 5-10 %
of the rows; sort keys in an order unrelated to insertion) and a noise organization with a tenth
as many. It serves both through the whole app in this process (httpx's ASGI transport: auth,
rate limits off, tenancy, the list's route), walks each list to its third cursor page and then
asks for that page `--requests` times per size, alternating small and large so that the
machine's load falls on both alike. Prints the p50 of each (ms) and large/small; the goal is
<= 1.3x (cursor mode never counts; page mode is not measured here).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import httpx
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

BASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
SECRET = "bench-lists-" + uuid.uuid4().hex


@dataclass(frozen=True)
class Listed:
    name: str  # operationId
    path: str
    sorts: tuple[str, ...]


LISTS = (
    Listed("listAccounts", "/api/v1/accounts", ("createdAt", "updatedAt", "name")),
    Listed("listContacts", "/api/v1/contacts", ("createdAt", "updatedAt", "lastName", "email")),
    Listed(
        "listOpportunities",
        "/api/v1/opportunities",
        ("createdAt", "updatedAt", "name", "closeDate"),
    ),
    Listed("listLeads", "/api/v1/leads", ("createdAt", "updatedAt", "lastName", "email")),
    Listed("listBuyingGroups", "/api/v1/buying-groups", ("createdAt", "updatedAt", "name")),
    Listed("listRelationshipMaps", "/api/v1/relationship-maps", ("createdAt", "updatedAt")),
    Listed("listPlans", "/api/v1/plans", ("createdAt", "updatedAt", "name")),
    Listed("listMyTasks", "/api/v1/tasks", ("createdAt", "updatedAt", "title")),
    Listed("listEngageTemplates", "/api/v1/engage/templates", ("createdAt", "updatedAt", "name")),
    Listed("listEngageDrafts", "/api/v1/engage/drafts", ("createdAt", "updatedAt")),
    Listed("listEngageLists", "/api/v1/engage/lists", ("createdAt", "updatedAt", "name")),
    Listed("listEngageCampaigns", "/api/v1/engage/campaigns", ("createdAt", "updatedAt", "name")),
    Listed("listEngageQueue", "/api/v1/engage/queue", ("createdAt", "updatedAt")),
    Listed("listEngageReplies", "/api/v1/engage/replies", ("receivedAt",)),
    Listed("listEngageSuppressions", "/api/v1/engage/suppressions", ("createdAt", "address")),
    Listed("listCalendarEvents", "/api/v1/calendar/events", ("start", "createdAt", "updatedAt")),
)


# --- data ------------------------------------------------------------------------------------


def _word(rnd: random.Random) -> str:
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)).title()


class Rows:
    """Rows of one organization: times spread over a year in random order, 2 % archived."""

    def __init__(self, rnd: random.Random, org: uuid.UUID, user: uuid.UUID) -> None:
        self.rnd, self.org, self.user = rnd, org, user
        self.start = datetime(2026, 1, 1, tzinfo=UTC)

    def base(self, archived: bool = True) -> dict[str, Any]:
        created = self.start + timedelta(seconds=self.rnd.randrange(365 * 86400))
        row: dict[str, Any] = {
            "id": uuid.uuid4(),
            "organization_id": self.org,
            "created_at": created,
            "updated_at": created + timedelta(seconds=self.rnd.randrange(30 * 86400)),
        }
        if archived:
            row["archived_at"] = row["updated_at"] if self.rnd.random() < 0.02 else None
        return row

    def maybe(self, value: Any, missing: float) -> Any:
        return None if self.rnd.random() < missing else value


def generate(rows: Rows, n: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(table, rows) in an order that satisfies the foreign keys."""
    from salesplan.models.crm import empty_map

    rnd = rows.rnd
    accounts = []
    for _ in range(n):
        r = rows.base() | {"name": _word(rnd) + " Inc", "domain": f"{_word(rnd).lower()}.example"}
        accounts.append(r)
    yield "accounts", accounts
    ids = [a["id"] for a in accounts]
    contacts = []
    for _ in range(n):
        email = rows.maybe(f"{_word(rnd).lower()}@{_word(rnd).lower()}.example", 0.1)
        contacts.append(
            rows.base()
            | {
                "account_id": rnd.choice(ids),
                "first_name": _word(rnd),
                "last_name": rows.maybe(_word(rnd), 0.05),
                "email": email,
                "email_mailbox": email,
            }
        )
    yield "contacts", contacts
    yield (
        "opportunities",
        [
            rows.base()
            | {
                "account_id": rnd.choice(ids),
                "name": _word(rnd) + " deal",
                "status": "open",
                "close_date": rows.maybe(
                    date(2026, 1, 1) + timedelta(days=rnd.randrange(730)), 0.1
                ),
            }
            for _ in range(n)
        ],
    )
    yield (
        "leads",
        [
            rows.base()
            | {
                "first_name": _word(rnd),
                "last_name": rows.maybe(_word(rnd), 0.05),
                "email": rows.maybe(f"{_word(rnd).lower()}@lead.example", 0.1),
                "status": "new",
            }
            for _ in range(n)
        ],
    )
    yield (
        "buying_groups",
        [
            rows.base() | {"account_id": a, "name": _word(rnd) + " group", "is_default": False}
            for a in ids
        ],
    )
    yield (
        "relationship_maps",
        [
            rows.base(archived=False)
            | {
                "entity_type": "Account",
                "entity_id": a,
                "account_id": a,
                "map": empty_map(),
                "orientation": "vertical",
            }
            for a in ids
        ],
    )
    plans = [
        rows.base()
        | {
            "name": _word(rnd) + " plan",
            "entity_type": "USER",
            "entity_id": rows.user,
            "user_id": rows.user,
            "version": 1,
        }
        for _ in range(n)
    ]
    yield "plans", plans
    live_plans = [p["id"] for p in plans if p["archived_at"] is None]
    yield (
        "plan_tasks",
        [
            rows.base()
            | {
                "plan_id": rnd.choice(live_plans),
                "title": _word(rnd) + " task",
                "completed": False,
                "assigned_to_id": rows.user,
            }
            for _ in range(n)
        ],
    )
    yield (
        "engage_templates",
        [
            rows.base() | {"name": _word(rnd), "channel": "EMAIL", "subject": "Hi", "body": "Hello"}
            for _ in range(n)
        ],
    )
    yield (
        "engage_drafts",
        [rows.base(archived=False) | {"channel": "EMAIL", "body": "Draft"} for _ in range(n)],
    )
    yield (
        "engage_lists",
        [rows.base() | {"name": _word(rnd), "type": "MANUAL"} for _ in range(n)],
    )
    yield (
        "engage_campaigns",
        [
            rows.base(archived=False)
            | {"name": _word(rnd), "status": "draft", "flow": {"steps": []}}
            for _ in range(n)
        ],
    )
    yield (
        "engage_messages",
        [
            rows.base(archived=False)
            | {
                "channel": "EMAIL",
                "to_address": "ada@example.com",
                "to_mailbox": "ada@example.com",
                "subject": "Hi",
                "body": "Hello",
                "status": "sent",
                "rfc_message_id": f"<{uuid.uuid4().hex}@bench.example>",
            }
            for _ in range(n)
        ],
    )
    replies = []
    for _ in range(n):
        r = rows.base(archived=False)
        r.pop("updated_at")
        replies.append(r | {"from_address": "ada@example.com", "received_at": r["created_at"]})
    yield "engage_replies", replies
    suppressions = []
    for i in range(n):
        r = rows.base(archived=False)
        r.pop("updated_at")
        suppressions.append(r | {"email": f"{_word(rnd).lower()}{i}@x.example", "reason": "manual"})
    yield "engage_suppressions", suppressions
    connection = rows.base(archived=False) | {
        "user_id": rows.user,
        "url": "https://calendar.example/",
        "username": "bench",
        "password_encrypted": "x",
    }
    yield "calendar_connections", [connection]
    events = []
    for i in range(n):
        r = rows.base(archived=False)
        start = rows.start + timedelta(seconds=rnd.randrange(365 * 86400))
        events.append(
            r
            | {
                "connection_id": connection["id"],
                "user_id": rows.user,
                "href": f"/cal/{i}.ics",
                "uid": f"{i}@bench",
                "title": _word(rnd),
                "start_at": start,
                "end_at": start + timedelta(hours=1),
                "attendees": [],
            }
        )
    yield "calendar_events", events


async def seed(url: str, size: int) -> tuple[str, str]:
    """Migrate `url`, make the organization (`size` rows a table) and a noise organization;
    answers (API key, organization id)."""
    from salesplan.auth.tokens import create_api_key
    from salesplan.db import create_sessionmaker
    from salesplan.events import handlers
    from salesplan.migrate import upgrade
    from salesplan.models import Base
    from salesplan.organizations.service import add_user, create_organization

    await asyncio.to_thread(upgrade, url)
    engine = create_async_engine(url)
    key, org_id = "", ""
    async with create_sessionmaker(engine, handlers())() as session:
        for name, count in (("Bench", size), ("Noise", max(size // 10, 100))):
            org = await create_organization(session, name=name)
            user = await add_user(
                session,
                organization_id=org.id,
                email=f"{name.lower()}-{uuid.uuid4().hex[:6]}@example.com",
                password="bench-pass",
                role="admin",
            )
            _, raw = await create_api_key(session, user_id=user.id, name="bench")
            if name == "Bench":
                key, org_id = raw, str(org.id)
            rows = Rows(random.Random(size + len(name)), org.id, user.id)
            for table, batch in generate(rows, count):
                for start in range(0, len(batch), 5000):
                    await session.execute(
                        insert(Base.metadata.tables[table]), batch[start : start + 5000]
                    )
        await session.commit()
    await _analyze(engine)
    await engine.dispose()
    return key, org_id


async def _analyze(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("VACUUM ANALYZE"))
        else:
            await conn.execute(text("ANALYZE"))
            await conn.commit()


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Served:
    size: int
    client: httpx.AsyncClient
    headers: dict[str, str]


async def third_page(served: Served, path: str, sort: str, order: str) -> str:
    url = f"{path}?limit=50&sortBy={sort}&order={order}"
    for _ in range(2):
        resp = await served.client.get(url, headers=served.headers)
        assert resp.status_code == 200, (url, resp.text[:300])
        cursor = resp.json()["pagination"]["nextCursor"]
        assert cursor, (url, "no next page")
        url = f"{path}?limit=50&sortBy={sort}&order={order}&cursor={cursor}"
    return url


async def timed(served: Served, url: str) -> float:
    started = time.perf_counter()
    resp = await served.client.get(url, headers=served.headers)
    elapsed = (time.perf_counter() - started) * 1000
    assert resp.status_code == 200 and len(resp.json()["data"]) == 50, (url, resp.text[:300])
    return elapsed


@contextmanager
def statements(engine: Any) -> Iterator[list[tuple[str, Any]]]:
    """The list page statements run meanwhile, with their arguments: through SQLAlchemy
    (`before_cursor_execute`) or straight on the driver (kit.driver)."""
    from sqlalchemy import event

    from salesplan.kit.driver import DriverStatement

    found: list[tuple[str, Any]] = []

    def on_execute(conn: Any, cursor: Any, sql: str, params: Any, *_: Any) -> None:
        if "_sort_key" in sql:
            found.append((sql, params))

    original = DriverStatement._on_asyncpg

    async def on_asyncpg(self: Any, conn: Any, method: str, params: Any) -> Any:
        compiled = self._compiled(conn)
        if "_sort_key" in compiled.sql:
            found.append((compiled.sql, compiled.args(params)))
        return await original(self, conn, method, params)

    event.listen(engine.sync_engine, "before_cursor_execute", on_execute)
    DriverStatement._on_asyncpg = on_asyncpg  # type: ignore[method-assign]
    try:
        yield found
    finally:
        DriverStatement._on_asyncpg = original  # type: ignore[method-assign]
        event.remove(engine.sync_engine, "before_cursor_execute", on_execute)


async def explain(served: Served, url: str, engine: Any) -> list[str]:
    """EXPLAIN ANALYZE (PostgreSQL) of the statements one request of `url` runs."""
    with statements(engine) as found:
        await timed(served, url)
    out = []
    async with engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        for sql, args in found:
            if "%s" in sql:
                parts = sql.split("%s")
                sql = "".join(f"{p}${i + 1}" for i, p in enumerate(parts[:-1])) + parts[-1]
            rows = await raw.fetch("EXPLAIN (ANALYZE, COSTS OFF) " + sql, *args)
            out += [r[0] for r in rows]
    return out


async def measure(
    small: Served, large: Served, requests: int, only: list[str], engine: Any = None
) -> list[str]:
    lines = [
        f"{'list':24} {'sortBy':10} {'order':5} {small.size:>8,} {large.size:>8,}  ratio",
    ]
    worst = 0.0
    for listed in LISTS:
        if only and not any(o.lower() in listed.name.lower() for o in only):
            continue
        for sort in listed.sorts:
            for order in ("asc", "desc"):
                urls = [await third_page(s, listed.path, sort, order) for s in (small, large)]
                for s, u in zip((small, large), urls, strict=True):
                    await timed(s, u)  # warm
                times: tuple[list[float], list[float]] = ([], [])
                for _ in range(requests):
                    for i, s in enumerate((small, large)):
                        times[i].append(await timed(s, urls[i]))
                a, b = statistics.median(times[0]), statistics.median(times[1])
                worst = max(worst, b / a)
                if engine is not None and order == "asc":
                    plan = await explain(large, urls[1], engine)
                    print("\n".join("    " + line for line in plan), flush=True)
                line = f"{listed.name:24} {sort:10} {order:5} {a:8.2f} {b:8.2f}  {b / a:5.2f}"
                lines.append(line + ("  over 1.3" if b / a > 1.3 else ""))
                print(line, flush=True)
    lines.append(f"worst ratio: {worst:.2f} (goal <= 1.3)")
    return lines


async def run_engine(
    engine: str, sizes: tuple[int, int], requests: int, only: list[str], explain_plans: bool
) -> None:
    from salesplan.app import create_app
    from salesplan.config import Settings

    engine_name_is_pg = engine == "postgresql"
    folder = Path(tempfile.mkdtemp(prefix="salesplan-lists-"))
    urls: list[str] = []
    base = make_url(BASE_URL)
    for size in sizes:
        if engine == "sqlite":
            urls.append(f"sqlite+aiosqlite:///{folder}/lists-{size}.db")
        else:
            name = f"salesplan_bench_lists_{uuid.uuid4().hex[:8]}"
            admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
            async with admin.connect() as conn:
                await conn.execute(text(f'CREATE DATABASE "{name}"'))
            await admin.dispose()
            urls.append(base.set(database=name).render_as_string(hide_password=False))
    try:
        served: list[Served] = []
        apps = []
        for size, url in zip(sizes, urls, strict=True):
            started = time.perf_counter()
            key, org = await seed(url, size)
            print(f"{engine}: seeded {size:,} rows a table in {time.perf_counter() - started:.0f}s")
            settings = Settings(
                database_url=url,
                secret_key=SECRET,
                rate_limits_enabled=False,
                worker_in_process=False,
                _env_file=None,  # type: ignore[call-arg]
            )
            app = create_app(settings)
            apps.append(app)
            client = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench"
            )
            served.append(
                Served(size, client, {"Authorization": f"Bearer {key}", "X-Organization-Id": org})
            )
        async with apps[0].router.lifespan_context(apps[0]):
            async with apps[1].router.lifespan_context(apps[1]):
                print(f"\n{engine}: third cursor page (limit 50), p50 ms of {requests} requests")
                engine = apps[1].state.engine if explain_plans and engine_name_is_pg else None
                lines = await measure(served[0], served[1], requests, only, engine)
                print(lines[-1])
        for s in served:
            await s.client.aclose()
    finally:
        if engine != "sqlite":
            admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
            async with admin.connect() as conn:
                for url in urls:
                    name = make_url(url).database
                    await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            await admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument(
        "--explain",
        action="store_true",
        help="PostgreSQL: EXPLAIN ANALYZE of each ascending third page at the large size",
    )
    args = parser.parse_args()
    engines = ("postgresql", "sqlite") if args.engine == "both" else (args.engine,)
    for engine in engines:
        asyncio.run(
            run_engine(engine, (args.small, args.large), args.requests, args.only, args.explain)
        )


if __name__ == "__main__":
    main()
