"""Enrollment time of a list of N contacts: from the 202 of `enrollEngageCampaign` (a DYNAMIC
list over one account) to the job's `completed`, run by one worker loop in this process.

    .venv/bin/python bench/engage.py \
        --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres --sizes 5000 50000

A throwaway database is created beside the given one and dropped at the end (SQLite: a temp file).
Target (issue 12): 50,000 contacts in under 10 s on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid

import httpx
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.jobs.loop import drain, new_worker_id
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.migrate import upgrade_connection
from salesplan.models.crm import Account, Contact
from salesplan.worker.context import WorkerContext


async def enroll_once(app: object, client: httpx.AsyncClient, headers: dict, size: int) -> float:
    state = app.state  # type: ignore[attr-defined]
    async with state.sessionmaker() as session:
        org_id = (await session.execute(text("SELECT id FROM organizations LIMIT 1"))).scalar()
        account = Account(organization_id=org_id, name=f"Bench {size}")
        session.add(account)
        await session.flush()
        now = utcnow()
        rows = [
            {
                "id": uuid7(),
                "organization_id": org_id,
                "account_id": account.id,
                "first_name": f"C{i}",
                "email": f"c{i}@bench.example",
                "created_at": now,
                "updated_at": now,
            }
            for i in range(size)
        ]
        for start in range(0, size, 2000):
            await session.execute(insert(Contact), rows[start : start + 2000])
        await session.commit()
    api = "/api/v1/engage"
    tpl = await client.post(
        f"{api}/templates",
        json={"name": "T", "channel": "EMAIL", "subject": "Hi", "body": "Hello"},
        headers=headers,
    )
    campaign = await client.post(
        f"{api}/campaigns",
        json={
            "name": "C",
            "flow": {"steps": [{"channel": "EMAIL", "templateId": tpl.json()["id"]}]},
        },
        headers=headers,
    )
    lst = await client.post(
        f"{api}/lists",
        json={"name": "L", "type": "DYNAMIC", "criteria": {"accountIds": [str(account.id)]}},
        headers=headers,
    )
    ctx = WorkerContext(
        settings=state.settings,
        engine=state.engine,
        sessionmaker=state.sessionmaker,
        worker_id=new_worker_id(),
    )
    started = time.perf_counter()
    resp = await client.post(
        f"{api}/campaigns/{campaign.json()['id']}/enrollments",
        json={"listId": lst.json()["id"]},
        headers=headers,
    )
    assert resp.status_code == 202, resp.text
    await drain(ctx)
    elapsed = time.perf_counter() - started
    job = await client.get(f"{api}/enrollment-jobs/{resp.json()['job']['id']}", headers=headers)
    data = job.json()
    assert data["status"] == "completed" and data["enrolled"] == size, data
    return elapsed


async def main(database_url: str, sizes: list[int]) -> None:
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
            worker_in_process=False,
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
                print(f"engine: {url.get_backend_name()}  batch: {settings.enrollment_batch_size}")
                for size in sizes:
                    elapsed = await enroll_once(app, client, headers, size)
                    print(
                        f"enroll {size:>7,} contacts: {elapsed:6.2f} s  "
                        f"({size / elapsed:,.0f} contacts/s)"
                    )
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
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    args = parser.parse_args()
    asyncio.run(main(args.database_url, args.sizes))
