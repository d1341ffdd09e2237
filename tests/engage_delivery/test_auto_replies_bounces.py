"""Contract §14 "Auto-replies" and "Bounces", over real SMTP (aiosmtpd) and signed inbound mail:
an automatic answer is listed with `autoReply: true` but sets no repliedAt, is not counted as
replied and does not stop the sequence; a 5.x.x DSN is a hard bounce (suppressed, `bounced`), a
4.x.x one is soft (lastError, still `sent`, nobody suppressed)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from salesplan.engage.delivery.queue import outbox_message
from salesplan.engage.delivery.worker import run_delivery
from salesplan.kit.clock import utcnow
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send
from tests.engage_delivery.test_tracking_inbound import (
    delivered,
    dsn,
    post_inbound,
    reply_to,
    secret_of,
)
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import make_actor

API = "/api/v1/engage"

# (header lines added to a reply, or a new Subject) that make it an auto-reply (contract §14).
AUTO = [
    pytest.param(["Auto-Submitted: auto-replied"], None, id="auto-submitted"),
    pytest.param(["Auto-Submitted: auto-generated; owner-email=x@y.example"], None, id="auto-gen"),
    pytest.param(["X-Autoreply: yes"], None, id="x-autoreply"),
    pytest.param(["X-Autorespond: Out of office"], None, id="x-autorespond"),
    pytest.param(["Precedence: auto_reply"], None, id="precedence-auto-reply"),
    pytest.param(["Precedence: bulk"], None, id="precedence-bulk"),
    pytest.param(["Precedence: junk"], None, id="precedence-junk"),
    pytest.param(["X-Auto-Response-Suppress: OOF"], None, id="suppress-oof"),
    pytest.param(["X-Auto-Response-Suppress: DR, RN, NRN, OOF, AutoReply"], None, id="oof-list"),
    pytest.param(["X-Auto-Response-Suppress: All"], None, id="suppress-all"),
    pytest.param([], "Automatic reply: Hi", id="subject-automatic-reply"),
    pytest.param([], "Auto: Hi", id="subject-auto"),
    pytest.param([], "Out of Office: back on Monday", id="subject-oof"),
]
# Look alike but are people writing back.
HUMAN = [
    pytest.param(["Auto-Submitted: no"], None, id="auto-submitted-no"),
    pytest.param(["Precedence: list"], None, id="precedence-list"),
    pytest.param(["X-Auto-Response-Suppress: DR, RN"], None, id="suppress-dr"),
    pytest.param([], "Re: Automatic reply setup", id="subject-re"),
]


def answer(message_id: str, headers: list[str], subject: str | None, n: int = 1) -> bytes:
    raw = reply_to(message_id).replace(b"<reply-1@example.com>", f"<reply-{n}@ex.com>".encode())
    if subject is not None:
        raw = raw.replace(b"Subject: Re: Hi", f"Subject: {subject}".encode())
    extra = "".join(f"{h}\r\n" for h in headers).encode()
    return raw.replace(b"MIME-Version: 1.0\r\n", extra + b"MIME-Version: 1.0\r\n", 1)


async def campaign_steps(app, db, actor, smtp) -> tuple[uuid.UUID, list]:
    """Three steps of one contact's sequence: the first sent over SMTP, two waiting."""
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email="ada@example.com")
    campaign = uuid.uuid4()
    steps = [
        outbox_message(
            app.state.settings,
            organization_id=actor.org.id,
            channel="EMAIL",
            contact_id=contact.id,
            to=contact.email,
            subject=f"Step {n}",
            body="Hello",
            send_at=None if n == 0 else utcnow() + timedelta(days=n),
            campaign_id=campaign,
            step_index=n,
        )
        for n in range(3)
    ]
    db.add_all(steps)
    await db.commit()
    await run_delivery(worker_context(app, smtp))
    assert len(smtp.received) == 1
    return campaign, steps


async def statuses(client, actor, campaign) -> dict[str, str]:
    queue = await client.get(f"{API}/queue?campaignId={campaign}", headers=actor.in_org())
    return {item["subject"]: item["status"] for item in queue.json()["data"]}


@pytest.mark.parametrize(("headers", "subject"), AUTO)
async def test_an_auto_reply_is_listed_but_does_not_reply_or_stop_the_sequence(
    app, client, actor, db, smtp, headers, subject
) -> None:
    secret = await secret_of(app, db, actor)
    campaign, steps = await campaign_steps(app, db, actor, smtp)
    raw = answer(steps[0].rfc_message_id, headers, subject)
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202

    replies = (await client.get(f"{API}/replies", headers=actor.in_org())).json()["data"]
    assert [(r["messageId"], r["autoReply"]) for r in replies] == [(str(steps[0].id), True)]
    one = await client.get(f"{API}/replies/{replies[0]['id']}", headers=actor.in_org())
    assert one.json()["autoReply"] is True
    item = (await client.get(f"{API}/queue/{steps[0].id}", headers=actor.in_org())).json()
    assert item["repliedAt"] is None
    analytics = (await client.get(f"{API}/analytics", headers=actor.in_org())).json()
    assert analytics["totals"]["replied"] == 0
    assert analytics["totals"]["sent"] == 1
    # The sequence goes on: the later steps still wait.
    assert await statuses(client, actor, campaign) == {
        "Step 0": "sent",
        "Step 1": "scheduled",
        "Step 2": "scheduled",
    }


@pytest.mark.parametrize(("headers", "subject"), HUMAN)
async def test_a_person_writing_back_is_a_reply(
    app, client, actor, db, smtp, headers, subject
) -> None:
    secret = await secret_of(app, db, actor)
    campaign, steps = await campaign_steps(app, db, actor, smtp)
    raw = answer(steps[0].rfc_message_id, headers, subject)
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    replies = (await client.get(f"{API}/replies", headers=actor.in_org())).json()["data"]
    assert [r["autoReply"] for r in replies] == [False]
    item = (await client.get(f"{API}/queue/{steps[0].id}", headers=actor.in_org())).json()
    assert item["repliedAt"] is not None
    analytics = (await client.get(f"{API}/analytics", headers=actor.in_org())).json()
    assert analytics["totals"]["replied"] == 1
    assert await statuses(client, actor, campaign) == {
        "Step 0": "sent",
        "Step 1": "cancelled",
        "Step 2": "cancelled",
    }


async def test_an_out_of_office_then_a_real_reply_ends_the_sequence_once(
    app, client, actor, db, smtp
) -> None:
    secret = await secret_of(app, db, actor)
    campaign, steps = await campaign_steps(app, db, actor, smtp)
    ooo = answer(steps[0].rfc_message_id, ["Auto-Submitted: auto-replied"], "Out of Office", 1)
    human = answer(steps[0].rfc_message_id, [], None, 2)
    for raw in (ooo, human):
        assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    replies = (await client.get(f"{API}/replies?sortBy=receivedAt", headers=actor.in_org())).json()
    assert sorted(r["autoReply"] for r in replies["data"]) == [False, True]
    analytics = (await client.get(f"{API}/analytics", headers=actor.in_org())).json()
    assert analytics["totals"]["replied"] == 1
    assert (await statuses(client, actor, campaign))["Step 1"] == "cancelled"


async def test_the_reply_schema_documents_auto_reply(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    reply = doc["components"]["schemas"]["ReplyOut"]
    assert reply["properties"]["autoReply"]["type"] == "boolean"
    assert "autoReply" in reply["required"]


async def suppressed(client, actor) -> list[dict]:
    response = await client.get(f"{API}/suppressions", headers=actor.in_org())
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


@pytest.mark.parametrize(("action", "status"), [("delayed", "4.4.7"), ("failed", "4.2.2")])
async def test_a_4xx_dsn_is_a_soft_bounce(app, client, actor, db, smtp, action, status) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = dsn(message["messageId"], action, status)
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = (await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())).json()
    assert item["status"] == "sent"
    assert item["bouncedAt"] is None
    assert status in item["lastError"]
    assert await suppressed(client, actor) == []
    # The address is still written to.
    again = await send(client, actor, email(), key="k-2")
    assert again.status_code == 202, again.text
    analytics = (await client.get(f"{API}/analytics", headers=actor.in_org())).json()
    assert analytics["totals"]["bounced"] == 0


async def test_a_5xx_dsn_is_a_hard_bounce(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = dsn(message["messageId"], "failed", "5.1.1")
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = (await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())).json()
    assert item["status"] == "bounced"
    assert item["bouncedAt"] is not None
    assert [(s["address"], s["reason"]) for s in await suppressed(client, actor)] == [
        ("ada@example.com", "hard_bounce")
    ]
    refused = await send(client, actor, email(), key="k-2")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["suppression"] == "hard_bounce"


async def test_a_soft_then_hard_bounce_ends_bounced(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    for n, (action, status) in enumerate((("delayed", "4.4.7"), ("failed", "5.1.1"))):
        raw = dsn(message["messageId"], action, status).replace(
            b"Subject: Hi", f"Subject: Hi\r\nX-N: {n}".encode()
        )
        assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = (await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())).json()
    assert item["status"] == "bounced"
    assert "5.1.1" in item["lastError"]


async def test_a_dsn_naming_another_organizations_message_changes_nothing(
    app, client, actor, db, smtp
) -> None:
    """§12 kept: the report is posted (signed) to one organization and names a message of
    another: neither the message nor anyone's suppression list changes."""
    other = await make_actor(db)
    other_secret = await secret_of(app, db, other)
    message, _ = await delivered(app, client, actor, smtp)
    for status in ("5.1.1", "4.2.2"):
        raw = dsn(message["messageId"], "failed", status)
        assert (await post_inbound(client, other.org.id, raw, other_secret)).status_code == 202
    item = (await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())).json()
    assert (item["status"], item["lastError"]) == ("sent", None)
    assert await suppressed(client, actor) == []
    assert await suppressed(client, other) == []


async def test_an_auto_reply_is_not_a_reply_in_the_communication_analytics_either(
    app, client, actor, db, smtp
) -> None:
    """Analytics' replies (engage and feed alike) leave auto-replies out; the feed still counts
    the message as received."""
    secret = await secret_of(app, db, actor)
    _, steps = await campaign_steps(app, db, actor, smtp)
    ooo = answer(steps[0].rfc_message_id, ["Auto-Submitted: auto-replied"], "Out of Office", 1)
    assert (await post_inbound(client, actor.org.id, ooo, secret)).status_code == 202
    today = utcnow().date().isoformat()
    query = {"from": today, "to": today}
    feed = await client.get("/api/v1/feed/analytics", headers=actor.in_org(), params=query)
    assert feed.status_code == 200, feed.text
    totals = feed.json()["totals"]
    assert (totals["sent"], totals["received"], totals["replies"]) == (1, 1, 0)
    assert totals["replyRate"] == 0
    engage = (await client.get(f"{API}/analytics", headers=actor.in_org())).json()
    assert engage["totals"]["replied"] == 0
    human = answer(steps[0].rfc_message_id, [], None, 2)
    assert (await post_inbound(client, actor.org.id, human, secret)).status_code == 202
    totals = (
        await client.get("/api/v1/feed/analytics", headers=actor.in_org(), params=query)
    ).json()["totals"]
    assert (totals["received"], totals["replies"], totals["replyRate"]) == (2, 1, 1.0)
