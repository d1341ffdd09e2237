"""The account inbox (contract §7 "feed", §11 "Feed shapes"): threads from e-mail, Slack and
calendar, attributed to an account by its contacts and domain at read time."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import update

from salesplan.engage.delivery.integrations import inbound_secret
from salesplan.models.crm import Contact
from tests.feed.helpers import (
    T0,
    enable_slack,
    meeting,
    post_slack,
    reply_to,
    sent_email,
    slack_event,
)
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_actor

API = "/api/v1/accounts"
ITEM_KEYS = {"id", "type", "subject", "participants", "snippet", "messageCount", "lastActivityAt"}


async def inbox(
    client: httpx.AsyncClient, actor: Actor, account_id: Any, **query: str
) -> dict[str, Any]:
    r = await client.get(f"{API}/{account_id}/inbox", headers=actor.in_org(), params=query)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def acme(db: Any, actor: Actor) -> tuple[Any, Any]:
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    jane = await make_contact(db, account, "Jane", "Doe", email="Jane@Acme.test")
    return account, jane


async def test_inbox_shows_email_slack_and_calendar_newest_first(client, db, app, actor) -> None:
    account, _ = await acme(db, actor)
    msg = await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="Pricing")
    await reply_to(db, msg, actor.org.id, "jane@acme.test", T0 + timedelta(hours=2))
    await meeting(db, actor.org.id, actor.user.id, ["jane@acme.test"], T0 + timedelta(days=1))
    await enable_slack(db, app, actor.org.id)
    ts = f"{(T0 + timedelta(days=2)).timestamp():.6f}"
    r = await post_slack(client, actor.org.id, slack_event("hi", email="jane@acme.test", ts=ts))
    assert r.status_code == 200, r.text

    body = await inbox(client, actor, account.id)
    assert [i["type"] for i in body["data"]] == ["slack", "calendar", "email"]
    for item in body["data"]:
        assert set(item) == ITEM_KEYS
        uuid.UUID(item["id"])
    email = body["data"][2]
    assert email["subject"] == "Pricing"
    assert email["messageCount"] == 2
    assert email["snippet"] == "Thanks!"
    assert email["lastActivityAt"].startswith("2026-11-02T11:00:00")
    assert {"email": "jane@acme.test", "name": None} in email["participants"]
    assert body["data"][1]["subject"] == "Discovery call"
    assert body["pagination"]["hasNextPage"] is False

    only = await inbox(client, actor, account.id, type="calendar")
    assert [i["type"] for i in only["data"]] == ["calendar"]
    r = await client.get(
        f"{API}/{account.id}/inbox", headers=actor.in_org(), params={"type": "fax"}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "validation_error"


async def test_thread_messages_oldest_first_threaded_by_in_reply_to(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    msg = await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="Pricing")
    secret = await inbound_secret(
        db, client._transport.app.state.settings, actor.org.id, create=True
    )  # type: ignore[attr-defined]
    await db.commit()
    raw = (
        "From: Jane <jane@acme.test>\r\nTo: sales@example.com\r\nSubject: Re: Pricing\r\n"
        "Message-ID: <r1@acme.test>\r\n"
        f"In-Reply-To: {msg.rfc_message_id}\r\nReferences: {msg.rfc_message_id}\r\n"
        "Content-Type: text/plain\r\n\r\nSounds good.\r\n"
    ).encode()
    sig = "sha256=" + hmac.new(str(secret).encode(), raw, hashlib.sha256).hexdigest()
    r = await client.post(
        "/inbound/email",
        params={"organizationId": str(actor.org.id)},
        content=raw,
        headers={"X-Salesplan-Signature": sig, "Content-Type": "message/rfc822"},
    )
    assert r.status_code == 202, r.text

    items = (await inbox(client, actor, account.id))["data"]
    assert len(items) == 1 and items[0]["messageCount"] == 2
    r = await client.get(
        f"{API}/{account.id}/inbox/threads/{items[0]['id']}/messages", headers=actor.in_org()
    )
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert [m["direction"] for m in data] == ["outbound", "inbound"]
    assert data[1]["text"].strip() == "Sounds good."
    assert data[1]["author"]["email"] == "jane@acme.test"
    assert "pagination" in r.json()


async def test_own_domain_mail_stays_out(client, db, actor) -> None:
    """Mail among the organization's own users (its users' domains) is no account conversation
    by domain; a contact of the account with such an address attributes its mail all the same
    (contract §12: a contact attributes the thread whatever the domain)."""
    account, _ = await acme(db, actor)
    own_domain = actor.user.email.rsplit("@", 1)[1]
    await make_contact(db, account, "Col", "League", email=f"colleague@{own_domain}")
    await sent_email(db, actor.org.id, f"colleague@{own_domain}", T0, subject="Contact")
    await sent_email(db, actor.org.id, f"someone@{own_domain}", T0, subject="Internal")
    await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="External")
    subjects = [i["subject"] for i in (await inbox(client, actor, account.id))["data"]]
    assert sorted(subjects) == ["Contact", "External"]
    ours, _ = await make_account(db, actor.org.id, "Ourselves", domain=own_domain)
    assert (await inbox(client, actor, ours.id))["data"] == []


async def test_attribution_follows_contacts_and_domain(client, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id, "Globex", domain="globex.test")
    other, _ = await make_account(db, actor.org.id, "Initech", domain=None)
    await sent_email(db, actor.org.id, "ceo@globex.test", T0, subject="By domain")
    await sent_email(db, actor.org.id, "bob@gmail.test", T0, subject="By contact")
    assert [i["subject"] for i in (await inbox(client, actor, account.id))["data"]] == ["By domain"]
    assert (await inbox(client, actor, other.id))["data"] == []
    # A contact added to Initech brings its mail at once ...
    bob = await make_contact(db, other, "Bob", "B", email="bob@gmail.test")
    assert [i["subject"] for i in (await inbox(client, actor, other.id))["data"]] == ["By contact"]
    # ... and takes it away when archived.
    await db.execute(update(Contact).where(Contact.id == bob.id).values(archived_at=T0))
    await db.commit()
    assert (await inbox(client, actor, other.id))["data"] == []


async def test_cursor_pagination_is_exact(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    for i in range(7):
        await sent_email(
            db, actor.org.id, "jane@acme.test", T0 + timedelta(minutes=i), subject=f"m{i}"
        )
    # two threads with the same activity: ties are broken by id, never lost
    await sent_email(db, actor.org.id, "jane@acme.test", T0 + timedelta(minutes=3), subject="tie")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        q = {"limit": "3"} | ({"cursor": cursor} if cursor else {})
        body = await inbox(client, actor, account.id, **q)
        pages += 1
        assert body["pagination"]["pageSize"] == 3
        seen += [i["subject"] for i in body["data"]]
        if not body["pagination"]["hasNextPage"]:
            assert "nextCursor" not in body["pagination"]
            break
        cursor = body["pagination"]["nextCursor"]
    assert pages == 3
    assert len(seen) == 8 and len(set(seen)) == 8
    assert seen[:3] == ["m6", "m5", "m4"]
    assert seen[-3:] == ["m2", "m1", "m0"]
    assert set(seen[3:5]) == {"m3", "tie"}
    r = await client.get(
        f"{API}/{account.id}/inbox", headers=actor.in_org(), params={"cursor": f"{cursor}x"}
    )
    assert r.status_code == 400
    other, _ = await make_account(db, actor.org.id, "Other", domain="other.test")
    r = await client.get(
        f"{API}/{other.id}/inbox", headers=actor.in_org(), params={"cursor": cursor}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "validation_error"


async def test_other_organization_and_other_account_are_404(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    await sent_email(db, actor.org.id, "jane@acme.test", T0)
    thread = (await inbox(client, actor, account.id))["data"][0]["id"]
    stranger = await make_actor(db)
    r = await client.get(f"{API}/{account.id}/inbox", headers=stranger.in_org())
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = await client.get(
        f"{API}/{account.id}/inbox/threads/{thread}/messages", headers=stranger.in_org()
    )
    assert r.status_code == 404
    # the stranger's own account cannot reach the thread either
    theirs, _ = await make_account(db, stranger.org.id, "Acme", domain="acme.test")
    r = await client.get(
        f"{API}/{theirs.id}/inbox/threads/{thread}/messages", headers=stranger.in_org()
    )
    assert r.status_code == 404
    assert (await inbox(client, stranger, theirs.id))["data"] == []
    # another account of the same organization: 404
    other, _ = await make_account(db, actor.org.id, "Other", domain="other.test")
    r = await client.get(
        f"{API}/{other.id}/inbox/threads/{thread}/messages", headers=actor.in_org()
    )
    assert r.status_code == 404
    # an e-mail thread is not a Slack thread
    r = await client.get(f"{API}/{account.id}/inbox/slack-threads/{thread}", headers=actor.in_org())
    assert r.status_code == 404
    r = await client.get(f"{API}/{uuid.uuid4()}/inbox", headers=actor.in_org())
    assert r.status_code == 404


async def test_feed_read_scope_and_openapi(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    reader = await make_actor(db, scopes=["accounts:read"])
    r = await client.get(f"{API}/{account.id}/inbox", headers=reader.in_org())
    assert r.status_code == 403
    assert r.json()["error"]["details"]["requiredScope"] == "feed:read"
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for name in (
        "getAccountInbox",
        "getAccountInboxThreadMessages",
        "getAccountInboxSlackThread",
        "getCommunicationAnalytics",
        "listNeedsAttention",
    ):
        assert ops[name]["x-scopes"] == ["feed:read"], name
        assert ops[name]["x-rate-limit-group"] == "feed", name
        assert "feed" in ops[name]["tags"]
    assert "/api/v1/accounts/{accountId}/inbox" in doc["paths"]
    assert "/api/v1/feed/analytics" in doc["paths"]


async def test_inbox_page_mode_and_cursor_with_page_refused(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    for i in range(3):
        await sent_email(
            db, actor.org.id, "jane@acme.test", T0 + timedelta(minutes=i), subject=f"m{i}"
        )
    body = await inbox(client, actor, account.id)  # default: cursor mode
    assert body["pagination"] == {"hasNextPage": False, "pageSize": 50}
    body = await inbox(client, actor, account.id, page="2", pageSize="2")
    assert [i["subject"] for i in body["data"]] == ["m0"]
    assert body["pagination"]["totalCount"] == 3 and body["pagination"]["totalPages"] == 2
    first = await inbox(client, actor, account.id, limit="2")
    r = await client.get(
        f"{API}/{account.id}/inbox",
        headers=actor.in_org(),
        params={"cursor": first["pagination"]["nextCursor"], "page": "2"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "validation_error"
    # Contract §4 (2026-11-27): the declared defaults beside `limit` or a cursor are as if
    # absent (what a generated client sends with every call).
    declared = {"page": "1", "pageSize": "50"}
    first = await inbox(client, actor, account.id, limit="2", **declared)
    assert first["pagination"] == {
        "hasNextPage": True,
        "nextCursor": first["pagination"]["nextCursor"],
        "pageSize": 2,
    }
    rest = await inbox(
        client, actor, account.id, cursor=first["pagination"]["nextCursor"], **declared
    )
    assert len(rest["data"]) == 1 and rest["pagination"] == {"hasNextPage": False, "pageSize": 50}
    for bad in ({"limit": "0"}, {"limit": "201"}):
        r = await client.get(f"{API}/{account.id}/inbox", headers=actor.in_org(), params=bad)
        assert r.status_code == 400
