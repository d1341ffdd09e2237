"""Contract §12 "Templates" at send: a message whose render stops (over 1 s or 1 MiB, or an
error) is written `failed` with the reason as its `lastError`, and the worker never sends it."""

from __future__ import annotations

from salesplan.engage.delivery.worker import run_delivery
from tests.engage.helpers import API, email_template
from tests.engage.test_template_budget import EXPENSIVE, ONLY_FOR_CONTACTS
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_campaign_start import contacts, enroll, queue, start, work
from tests.fixtures.crm import make_account, make_contact


async def test_a_send_whose_render_stops_is_failed_and_never_sent(
    app, client, actor, db, smtp
) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email="ada@example.com")
    tpl = await email_template(client, actor, body=ONLY_FOR_CONTACTS)
    headers = actor.in_org() | {"Idempotency-Key": "render-1"}
    body = {"channel": "EMAIL", "contactId": str(contact.id), "templateId": tpl["id"]}
    resp = await client.post(f"{API}/messages/send", json=body, headers=headers)
    assert resp.status_code == 202, resp.text
    message = resp.json()["message"]
    assert message["status"] == "failed"
    assert message["lastError"] == EXPENSIVE
    await run_delivery(worker_context(app, smtp))
    item = await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())
    assert item.json()["status"] == "failed"
    assert item.json()["lastError"] == EXPENSIVE
    assert smtp.received == []


async def test_a_campaign_step_whose_render_stops_is_a_failed_message(
    app, client, actor, db, smtp
) -> None:
    people = await contacts(db, actor, "Ada")
    tpl = await email_template(client, actor, body=ONLY_FOR_CONTACTS)
    flow = {"steps": [{"channel": "EMAIL", "templateId": tpl["id"], "delayMinutes": 0}]}
    created = await client.post(
        f"{API}/campaigns", json={"name": "Launch", "flow": flow}, headers=actor.in_org()
    )
    assert created.status_code == 201, created.text
    campaign = created.json()
    await enroll(app, client, actor, campaign, [p.id for p in people])
    started = await start(client, actor, campaign["id"])
    assert started.status_code == 200, started.text
    await work(app, smtp)
    items = await queue(client, actor, campaign["id"])
    assert [(i["status"], i["lastError"]) for i in items] == [("failed", EXPENSIVE)]
    assert smtp.received == []
