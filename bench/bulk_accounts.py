"""Rows per second of 1000-row `bulkCreateAccounts` calls, through the ASGI app (auth, limits
off, validation, the bulk path, JSON) on a fresh database.

    .venv/bin/python bench/bulk_accounts.py \
        --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres --calls 20

A throwaway database is created beside the given one and dropped at the end (SQLite: a temp file).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.migrate import upgrade_connection


async def main(database_url: str, calls: int, rows: int) -> None:
    url = make_url(database_url)
    admin = None
    if url.get_backend_name() == "postgresql":
        name = f"salesplan_bench_{uuid.uuid4().hex[:10]}"
        admin = create_async_engine(url, isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        target = url.set(database=name).render_as_string(hide_password=False)
    else:
        target = f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/bench.db"
    try:
        engine = create_async_engine(target)
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection)
        await engine.dispose()
        settings = Settings(
            database_url=target,
            secret_key="bench",
            rate_limits_enabled=False,
            _env_file=None,  # type: ignore[call-arg]
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            from salesplan.auth.tokens import create_api_key
            from salesplan.organizations.service import add_user, create_organization

            async with app.state.sessionmaker() as session:
                org = await create_organization(session, name="Bench")
                user = await add_user(
                    session, organization_id=org.id, email="bench@example.com", password="x" * 12
                )
                _, key = await create_api_key(session, user_id=user.id, name="bench")
                await session.commit()
            headers = {"Authorization": f"Bearer {key}"}
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                timings = []
                for call in range(calls + 1):
                    body = {
                        "accounts": [
                            {
                                "name": f"Account {call}-{i}",
                                "domain": f"a{call}-{i}.example",
                                "crmId": f"CRM-{call}-{i}",
                                "annualRevenue": 1000 + i,
                                "employeeCount": i,
                            }
                            for i in range(rows)
                        ]
                    }
                    started = time.perf_counter()
                    resp = await client.post("/api/v1/accounts/bulk", json=body, headers=headers)
                    elapsed = time.perf_counter() - started
                    assert resp.status_code == 207 and resp.json()["created"] == rows, resp.text
                    if call:  # the first call warms up
                        timings.append(elapsed)
        total = sum(timings)
        print(f"engine: {url.get_backend_name()}  calls: {calls}  rows/call: {rows}")
        print(f"median call: {statistics.median(timings) * 1000:.0f} ms")
        print(f"throughput: {calls * rows / total:,.0f} rows/s")
    finally:
        if admin is not None:
            async with admin.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            await admin.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.database_url, args.calls, args.rows))
