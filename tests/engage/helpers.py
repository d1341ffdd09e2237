"""Arranging engage data: contacts in bulk, templates, campaigns, and running the worker."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.jobs.loop import drain, new_worker_id
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.models.crm import Contact
from salesplan.worker.context import WorkerContext

API = "/api/v1/engage"


async def bulk_contacts(
    db: AsyncSession,
    org_id: uuid.UUID,
    account_id: uuid.UUID,
    count: int,
    *,
    without_email: int = 0,
    title: str | None = None,
) -> list[uuid.UUID]:
    """`count` contacts in a few INSERTs; the first `without_email` have no address."""
    now = utcnow()
    ids: list[uuid.UUID] = []
    rows: list[dict[str, Any]] = []
    for i in range(count):
        cid = uuid7()
        ids.append(cid)
        rows.append(
            {
                "id": cid,
                "organization_id": org_id,
                "account_id": account_id,
                "first_name": f"C{i}",
                "last_name": "Bulk",
                "email": None if i < without_email else f"c{i}.{cid.hex[:6]}@bulk.example",
                "title": title,
                "created_at": now,
                "updated_at": now,
            }
        )
    for start in range(0, count, 2000):
        await db.execute(insert(Contact), rows[start : start + 2000])
    await db.commit()
    return ids


def worker_context(app: Any, worker_id: str | None = None) -> WorkerContext:
    return WorkerContext(
        settings=app.state.settings,
        engine=app.state.engine,
        sessionmaker=app.state.sessionmaker,
        worker_id=worker_id or new_worker_id(),
    )


async def run_worker(app: Any) -> None:
    await drain(worker_context(app))


async def email_template(client: Any, actor: Any, **fields: Any) -> dict[str, Any]:
    body = {"name": "Intro", "channel": "EMAIL", "subject": "Hi", "body": "Hello"} | fields
    resp = await client.post(f"{API}/templates", json=body, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def campaign(client: Any, actor: Any, *channels: str) -> dict[str, Any]:
    steps = []
    for channel in channels or ("EMAIL",):
        extra = {"subject": "S"} if channel == "EMAIL" else {}
        tpl = await email_template(client, actor, channel=channel, **extra)
        steps.append({"channel": channel, "templateId": tpl["id"], "delayMinutes": 0})
    resp = await client.post(
        f"{API}/campaigns", json={"name": "Launch", "flow": {"steps": steps}}, headers=actor.headers
    )
    assert resp.status_code == 201, resp.text
    return dict(resp.json())
