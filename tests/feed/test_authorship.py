"""Who wrote what, and when (issue 28 item 9): outbound mail names its sender; the inbox orders by
the last activity that has happened (a meeting still to come sorts last); a reply from a contact
carries its `contactId`; a campaign's status counts a reply under the step it answered."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesplan.kit.clock import utcnow
from tests.engage_delivery.test_campaign_start import (
    enroll,
    make_campaign,
    queue,
    start,
    status_of,
    work,
)
from tests.engage_delivery.test_send import send
from tests.engage_delivery.test_worker import make_due
from tests.feed.helpers import T0, meeting, post_mail, reply_mail, sent_email
from tests.feed.test_inbox import acme, inbox
from tests.fixtures.crm import make_account, make_contact

API = "/api/v1"


async def test_outbound_mail_names_its_sender(app, client, db, actor, smtp) -> None:
    account, _ = await acme(db, actor)
    body = {"channel": "EMAIL", "to": "jane@acme.test", "subject": "Pricing", "body": "Numbers."}
    assert (await send(client, actor, body)).status_code == 202
    await make_due(db)
    await work(app, smtp)
    (item,) = (await inbox(client, actor, account.id))["data"]
    r = await client.get(
        f"{API}/accounts/{account.id}/inbox/threads/{item['id']}/messages",
        headers=actor.in_org(),
    )
    (message,) = r.json()["data"]
    assert message["direction"] == "outbound"
    assert message["author"]["email"] == "sales@example.com"  # SALESPLAN_SMTP_FROM
    # the thread's participants stay the people written to
    assert [p["email"] for p in item["participants"]] == ["jane@acme.test"]


async def test_a_meeting_still_to_come_sorts_after_what_happened(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    now = utcnow()
    await meeting(db, actor.org.id, actor.user.id, ["jane@acme.test"], now + timedelta(days=3))
    await sent_email(db, actor.org.id, "jane@acme.test", now - timedelta(days=2), subject="Old")
    await meeting(
        db, actor.org.id, actor.user.id, ["jane@acme.test"], T0, title="Past call"
    )  # weeks ago
    await sent_email(db, actor.org.id, "jane@acme.test", now - timedelta(hours=1), subject="New")
    body = await inbox(client, actor, account.id)
    assert [i["subject"] for i in body["data"]] == ["New", "Old", "Past call", "Discovery call"]
    upcoming = body["data"][-1]
    assert upcoming["lastActivityAt"] is None  # nothing of it has happened yet
    for item in body["data"][:-1]:
        assert item["lastActivityAt"] is not None and item["lastActivityAt"] <= now.isoformat()
    # the cursor walks across the two parts exactly
    seen, cursor = [], None
    while True:
        page = await inbox(
            client, actor, account.id, limit="1", **({"cursor": cursor} if cursor else {})
        )
        seen += [i["subject"] for i in page["data"]]
        if not page["pagination"]["hasNextPage"]:
            break
        cursor = page["pagination"]["nextCursor"]
    assert seen == ["New", "Old", "Past call", "Discovery call"]


async def replies(client: Any, actor: Any) -> list[dict[str, Any]]:
    r = await client.get(f"{API}/engage/replies", headers=actor.in_org())
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


async def test_a_reply_from_a_contact_carries_its_contact_id(client, db, actor) -> None:
    # an archived contact of the same address, older than Jane: not who writes
    other, _ = await make_account(db, actor.org.id, "Other", domain="other.test")
    archived = await make_contact(db, other, "Old", "Jane", email="jane@acme.test")
    archived.archived_at = T0
    await db.commit()
    _, jane = await acme(db, actor)
    # a plain send to an address (no contactId), and a new mail from the contact
    msg = await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="Pricing")
    r = await post_mail(client, db, actor.org.id, reply_mail("Jane <JANE@acme.test>", msg, "Ok"))
    assert r.status_code == 202, r.text
    r = await post_mail(client, db, actor.org.id, reply_mail("jane@acme.test", None, "Hi"))
    assert r.status_code == 202, r.text
    r = await post_mail(client, db, actor.org.id, reply_mail("nobody@acme.test", None, "?"))
    assert r.status_code == 202, r.text
    by_text = {x["text"].strip(): x for x in await replies(client, actor)}
    assert by_text["Ok"]["contactId"] == str(jane.id)
    assert by_text["Hi"]["contactId"] == str(jane.id)
    assert by_text["?"]["contactId"] is None


async def test_campaign_status_counts_a_reply_under_the_step_it_answered(
    app, client, db, actor, smtp
) -> None:
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    ada = await make_contact(db, account, "Ada", "L", email="ada@acme.test")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 60), ("EMAIL", 60))
    await enroll(app, client, actor, campaign, [ada.id])
    await start(client, actor, campaign["id"])
    await work(app, smtp)  # step 0 sent, step 1 scheduled
    (first,) = [i for i in await queue(client, actor, campaign["id"]) if i["status"] == "sent"]
    r = await post_mail(
        client, db, actor.org.id, reply_mail("ada@acme.test", first["messageId"], "Yes")
    )
    assert r.status_code == 202, r.text
    status = await status_of(client, actor, campaign["id"])
    assert status["states"] == {"replied": 1}
    assert [s["states"] for s in status["steps"]] == [{"replied": 1}, {}, {}]
