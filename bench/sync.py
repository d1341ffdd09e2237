"""Incremental sync at scale on PostgreSQL: listAccounts with `updatedSince` over 200,000 accounts
in one organization (and 200,000 of another beside them), 1,000 of them sharing one `updatedAt`.

    .venv/bin/python bench/sync.py            # BENCH_DATABASE_URL

Creates its own database beside BENCH_DATABASE_URL (default
postgresql+asyncpg://postgres@127.0.0.1:5432/test), migrates it (so the indexes are the
migration's), loads it with INSERT … SELECT generate_series, and runs EXPLAIN (ANALYZE) of the
statements listAccounts runs (accounts/repository.py, kit/pagination.py): a poll of the last hour,
a cursor page deep inside the 1,000 ties, a poll of the last 30 days in page mode, and the same
with includeArchived. Prints PostgreSQL's execution time, the scan and the index used, and
whether a Sort appears. Drops the database at the end."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.plans import create_database, drop_database
from sqlalchemy import text
from sqlalchemy.engine import make_url

ACCOUNTS = 200_000
TIES = 1_000


async def load(url: str) -> dict[str, Any]:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    now = datetime.now(UTC)
    orgs = [uuid.uuid4(), uuid.uuid4()]
    tied = now - timedelta(hours=2)
    async with engine.begin() as conn:
        for org in orgs:
            await conn.execute(
                text(
                    "INSERT INTO organizations (id, name, slug, created_at, updated_at) "
                    "VALUES (:id, :name, :slug, now(), now())"
                ),
                {"id": org, "name": f"Org {org}", "slug": f"org-{org.hex[:12]}"},
            )
            # updatedAt spread over 30 days, one row a ~13 s; TIES rows share one instant;
            # every 50th archived.
            await conn.execute(
                text(
                    """
                    INSERT INTO accounts (id, organization_id, name, created_at, updated_at,
                                          archived_at)
                    SELECT gen_random_uuid(), :org, 'Account ' || g,
                           CAST(:now AS timestamptz) - interval '30 days',
                           CASE WHEN g <= :ties THEN CAST(:tied AS timestamptz)
                                ELSE CAST(:now AS timestamptz)
                                     - interval '30 days' * (1 - g::float / :n) END,
                           CASE WHEN g % 50 = 0 THEN CAST(:now AS timestamptz) END
                    FROM generate_series(1, :n) AS g
                    """
                ),
                {"org": org, "now": now, "n": ACCOUNTS, "ties": TIES, "tied": tied},
            )
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("ANALYZE"))
    await engine.dispose()
    return {"org": orgs[0], "now": now, "tied": tied}


async def explain(url: str, data: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    from sqlalchemy.ext.asyncio import create_async_engine

    from salesplan.accounts import repository as accounts
    from salesplan.kit.pagination import _page_statements

    engine = create_async_engine(url)
    now, tied, org = data["now"], data["tied"], data["org"]
    # The id in the middle of the tied rows: a cursor page that starts inside the ties.
    async with engine.connect() as conn:
        middle = (
            await conn.execute(
                text(
                    "SELECT id FROM accounts WHERE organization_id = :org AND updated_at = :t "
                    "ORDER BY id OFFSET :o LIMIT 1"
                ),
                {"org": org, "t": tied, "o": TIES // 2},
            )
        ).scalar_one()
    cases = [
        (
            "poll of the last hour, first page (cursor)",
            False,
            now - timedelta(hours=1),
            "cursor",
            None,
        ),
        ("cursor page inside 1,000 tied rows", False, tied, "cursor", (tied, middle)),
        (
            "poll of the last 30 days, page 3 (page mode)",
            False,
            now - timedelta(days=30),
            "page",
            None,
        ),
        ("the same, includeArchived (page mode)", True, now - timedelta(days=30), "page", None),
        ("includeArchived, cursor inside the ties", True, tied, "cursor", (tied, middle)),
    ]
    out = []
    async with engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        for label, archived, since, mode, after in cases:
            stmt = accounts._query(archived, False, False, False, True)
            rows, _ = _page_statements(
                stmt, accounts.A.updated_at, accounts.A.id, False, mode, after is not None
            )
            compiled = rows.compile(dialect=conn.dialect)
            values = {
                **compiled.params,
                "organization_id": org,
                "updated_since": since,
                "_limit": 51,
                "_offset": 100,
            }
            if after is not None:
                values["_after_value"], values["_after_id"] = after
            args = [values[n] for n in compiled.positiontup or ()]
            found = await raw.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled), *args)
            plan = (json.loads(found) if isinstance(found, str) else found)[0]
            text_plan = json.dumps(plan["Plan"])
            scans = _scans(plan["Plan"])
            out.append((label, plan["Execution Time"], scans, '"Sort"' in text_plan))
    await engine.dispose()
    return out


def _scans(node: dict[str, Any]) -> str:
    found = []
    if "Scan" in node["Node Type"]:
        found.append(f"{node['Node Type']} {node.get('Index Name', node.get('Relation Name'))}")
    for child in node.get("Plans", []):
        found.append(_scans(child))
    return "; ".join(f for f in found if f)


async def main() -> None:
    from salesplan.migrate import upgrade

    url = await create_database()
    print(f"database: {make_url(url).database}")
    try:
        await asyncio.to_thread(upgrade, url)
        started = time.perf_counter()
        data = await load(url)
        print(
            f"loaded 2 x {ACCOUNTS:,} accounts ({TIES:,} sharing one updatedAt) "
            f"in {time.perf_counter() - started:.1f}s"
        )
        for label, ms, scans, sort in await explain(url, data):
            print(f"{label}: {ms:.2f} ms in PostgreSQL; {scans}; sort: {'yes' if sort else 'no'}")
    finally:
        await drop_database(url)


if __name__ == "__main__":
    asyncio.run(main())
