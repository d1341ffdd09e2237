"""Inbound Slack (contract §11 "Inbound Slack"): signed Events API, refused when forged or
stale (nothing stored), url_verification, one message per event_id, threads by thread_ts,
authors matched to contacts by e-mail."""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import func, select

from salesplan.models.feed import FeedMessage, FeedThread
from tests.feed.helpers import SLACK_SECRET, enable_slack, post_slack, slack_event
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import make_actor

API = "/api/v1/accounts"


async def count(db: Any, model: Any) -> int:
    return int((await db.execute(select(func.count()).select_from(model))).scalar_one())


def now_ts(offset: float = 0) -> str:
    return f"{time.time() + offset:.6f}"


async def test_url_verification_answers_the_challenge(client, db, app, actor) -> None:
    await enable_slack(db, app, actor.org.id)
    payload = {
        "token": "t",
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
        "type": "url_verification",
    }
    r = await post_slack(client, actor.org.id, payload)
    assert r.status_code == 200
    assert r.json() == {"challenge": payload["challenge"]}


async def test_forged_missing_and_stale_signatures_are_refused(client, db, app, actor) -> None:
    await enable_slack(db, app, actor.org.id)
    event = slack_event("hello", email="jane@acme.test", ts=now_ts())
    forged = await post_slack(client, actor.org.id, event, secret="not-the-secret")
    missing = await post_slack(client, actor.org.id, event, sign=False)
    stale = await post_slack(client, actor.org.id, event, timestamp=int(time.time()) - 6 * 60)
    future = await post_slack(client, actor.org.id, event, timestamp=int(time.time()) + 6 * 60)
    garbage = await post_slack(
        client, actor.org.id, event, headers={"X-Slack-Request-Timestamp": "soon"}
    )
    for r in (forged, missing, stale, future, garbage):
        assert r.status_code == 401, r.text
        assert r.json()["error"]["code"] == "unauthorized"
    # a body changed after signing
    r = await post_slack(
        client, actor.org.id, event, headers={"X-Slack-Signature": "v0=" + "0" * 64}
    )
    assert r.status_code == 401
    assert await count(db, FeedMessage) == 0 and await count(db, FeedThread) == 0
    # an organization without a signing secret, and an unknown one: 401 as well
    other = await make_actor(db)
    assert (await post_slack(client, other.org.id, event)).status_code == 401
    assert (await post_slack(client, uuid.uuid4(), event)).status_code == 401
    # within 5 minutes: accepted
    ok = await post_slack(client, actor.org.id, event, timestamp=int(time.time()) - 4 * 60)
    assert ok.status_code == 200
    assert await count(db, FeedMessage) == 1


async def test_a_retried_event_is_stored_once(client, db, app, actor) -> None:
    await enable_slack(db, app, actor.org.id)
    event = slack_event("hello", email="jane@acme.test", ts=now_ts(), event_id="Ev0RETRY")
    first = await post_slack(client, actor.org.id, event)
    retries = [
        await post_slack(
            client,
            actor.org.id,
            event,
            headers={"X-Slack-Retry-Num": str(n), "X-Slack-Retry-Reason": "http_timeout"},
        )
        for n in (1, 2, 3)
    ]
    assert first.status_code == 200 and all(r.status_code == 200 for r in retries)
    assert await count(db, FeedMessage) == 1
    thread = (await db.execute(select(FeedThread))).scalar_one()
    assert thread.message_count == 1


async def test_threads_by_thread_ts_and_attributes_by_author(client, db, app, actor) -> None:
    account, _ = await make_account(db, actor.org.id, "Acme", domain=None)
    await make_contact(db, account, "Jane", "Doe", email="jane@customer.test")
    other, _ = await make_account(db, actor.org.id, "Beta", domain=None)
    await make_contact(db, other, "Sam", "Roe", email="sam@beta.test")
    await enable_slack(db, app, actor.org.id)
    root = now_ts(-100)
    await post_slack(
        client, actor.org.id, slack_event("Question?", email="jane@customer.test", ts=root)
    )
    await post_slack(
        client,
        actor.org.id,
        slack_event("Answer.", email=actor.user.email, ts=now_ts(-50), thread_ts=root, name="Rep"),
    )
    await post_slack(
        client,
        actor.org.id,
        slack_event("Me too", email="sam@beta.test", ts=now_ts(-10), thread_ts=root),
    )
    # an edit is no new message
    edit = slack_event("Question (edited)", email="jane@customer.test", ts=now_ts())
    edit["event"]["subtype"] = "message_changed"
    await post_slack(client, actor.org.id, edit)

    for acc in (account, other):  # the thread belongs to every account of one of its authors
        r = await client.get(f"{API}/{acc.id}/inbox", headers=actor.in_org())
        items = r.json()["data"]
        assert len(items) == 1 and items[0]["type"] == "slack"
        assert items[0]["messageCount"] == 3
        assert items[0]["snippet"] == "Me too"
    thread_id = items[0]["id"]
    r = await client.get(
        f"{API}/{account.id}/inbox/slack-threads/{thread_id}", headers=actor.in_org()
    )
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert [m["text"] for m in data] == ["Question?", "Answer.", "Me too"]
    assert [m["direction"] for m in data] == ["inbound", "outbound", "inbound"]
    assert data[0]["channel"] == "C0SHARED" and data[0]["ts"] == root
    assert data[0]["author"] == {"email": "jane@customer.test", "name": "Jane"}
    # the generic thread read serves Slack threads too
    r = await client.get(
        f"{API}/{account.id}/inbox/threads/{thread_id}/messages", headers=actor.in_org()
    )
    assert len(r.json()["data"]) == 3
    # an unrelated account sees nothing
    third, _ = await make_account(db, actor.org.id, "Gamma", domain="gamma.test")
    r = await client.get(f"{API}/{third.id}/inbox", headers=actor.in_org())
    assert r.json()["data"] == []
    r = await client.get(
        f"{API}/{third.id}/inbox/slack-threads/{thread_id}", headers=actor.in_org()
    )
    assert r.status_code == 404


async def test_secret_is_stored_encrypted(db, app, actor) -> None:
    from salesplan.models.engage_delivery import OrganizationIntegration

    await enable_slack(db, app, actor.org.id)
    row = await db.get(OrganizationIntegration, actor.org.id)
    assert row.slack_signing_secret_encrypted
    assert SLACK_SECRET.encode() not in row.slack_signing_secret_encrypted


async def test_an_overlong_or_odd_author_email_is_no_author(client, db, app, actor) -> None:
    """A `user_profile.email` over 320 characters (RFC 5321's limit), or not an address at all,
    is ignored as the author's e-mail: the message is stored, never a 500."""
    await enable_slack(db, app, actor.org.id)
    long_email = "a" * 320 + "@acme.test"
    odd: list[Any] = [long_email, "not an address", 42, {"x": 1}, "x" * 5000]
    for n, value in enumerate(odd):
        event = slack_event(f"message {n}", email="placeholder@acme.test", ts=now_ts(-n))
        event["event"]["user_profile"]["email"] = value
        r = await post_slack(client, actor.org.id, event)
        assert r.status_code == 200, r.text
    rows = (await db.execute(select(FeedMessage.text, FeedMessage.author_email))).all()
    assert sorted(text for text, _ in rows) == [f"message {n}" for n in range(len(odd))]
    assert {email for _, email in rows} == {None}
