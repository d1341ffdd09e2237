"""Bulk and CSV creates record their events (contract §13): one `account.created` or
`contact.created` per row created, the resource as getAccount/getContact answers it, in the
batch's transaction (a rolled-back batch records none)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from salesplan.accounts.importer import run_import
from salesplan.accounts.service import bulk_create_accounts
from salesplan.auth.principal import RequestContext
from salesplan.kit.uow import handle_pending
from salesplan.models.webhooks import WebhookEvent
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx


def _events(receiver: Any) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


async def test_a_bulk_create_records_one_event_per_created_account(
    app, client, actor, receiver
) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["account.*"])
    rows = [{"name": "One", "crmId": "B-1"}, {"name": "Two"}, {"name": "Three"}, {"name": ""}]
    resp = await client.post(
        "/api/v1/accounts/bulk", json={"accounts": rows}, headers=actor.headers
    )
    assert resp.status_code == 207, resp.text
    assert resp.json()["created"] == 3
    assert await deliver_due(worker_ctx(app)) == 3
    got = _events(receiver)
    assert [e["type"] for e in got] == ["account.created"] * 3
    by_id = {e["data"]["id"]: e["data"] for e in got}
    assert len(by_id) == 3
    for account_id, data in by_id.items():
        fetched = await client.get(f"/api/v1/accounts/{account_id}", headers=actor.headers)
        assert data == fetched.json()
    assert sorted(d["name"] for d in by_id.values()) == ["One", "Three", "Two"]


async def test_a_rolled_back_bulk_create_records_no_event(app, client, actor, db, receiver) -> None:
    await make_endpoint(client, actor, receiver.url)
    ctx = RequestContext.internal(actor.org.id, actor.user.id)
    rows = [{"name": f"N{i}"} for i in range(3)]
    async with app.state.sessionmaker() as session:
        assert (await bulk_create_accounts(session, ctx, rows))["created"] == 3
        await handle_pending(session)  # what the unit of work runs just before COMMIT
        assert await session.scalar(select(func.count()).select_from(WebhookEvent)) == 3
        await session.rollback()
    assert await db.scalar(select(func.count()).select_from(WebhookEvent)) == 0
    assert await deliver_due(worker_ctx(app)) == 0
    assert receiver.received == []


async def test_a_csv_import_records_created_accounts_and_contacts(
    app, client, actor, receiver, tmp_path: Path
) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["account.created", "contact.*"])
    accounts = tmp_path / "a.csv"
    with accounts.open("w", newline="") as fh:
        csv.writer(fh).writerows([["name", "crmId"], ["Acme", "ACC-1"], ["Globex", "ACC-2"]])
    contacts = tmp_path / "c.csv"
    with contacts.open("w", newline="") as fh:
        csv.writer(fh).writerows(
            [
                ["accountCrmId", "firstName", "lastName", "email"],
                ["ACC-1", "Ada", "Lovelace", "ada@example.com"],
                ["ACC-404", "Bob", "Nobody", "bob@example.com"],
            ]
        )
    database = app.state.database
    done = await run_import(database, "accounts", accounts, actor.org.id, tmp_path / "ra.csv")
    assert done.created == 2
    done = await run_import(database, "contacts", contacts, actor.org.id, tmp_path / "rc.csv")
    assert (done.created, done.rejected) == (1, 1)
    await deliver_due(worker_ctx(app))
    got = _events(receiver)
    types = sorted(e["type"] for e in got)
    assert types == ["account.created", "account.created", "contact.created"]
    [contact] = [e["data"] for e in got if e["type"] == "contact.created"]
    fetched = await client.get(f"/api/v1/contacts/{contact['id']}", headers=actor.headers)
    assert fetched.status_code == 200, fetched.text
    assert contact == fetched.json()
