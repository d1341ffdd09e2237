"""`feed_message.received` (contract §13) for an inbound e-mail that enters the account feed:
the message as the thread's messages API answers it."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from salesplan.engage.delivery.integrations import inbound_secret
from tests.feed.helpers import T0, sent_email
from tests.fixtures.crm import make_account, make_contact
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx


async def _post_mail(client: Any, db: Any, org_id: Any, raw: bytes) -> None:
    secret = await inbound_secret(db, client._transport.app.state.settings, org_id, create=True)
    await db.commit()
    sig = "sha256=" + hmac.new(str(secret).encode(), raw, hashlib.sha256).hexdigest()
    r = await client.post(
        "/inbound/email",
        params={"organizationId": str(org_id)},
        content=raw,
        headers={"X-Salesplan-Signature": sig, "Content-Type": "message/rfc822"},
    )
    assert r.status_code == 202, r.text


async def test_an_inbound_email_is_a_feed_message_received(
    app, client, db, actor, receiver
) -> None:
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    await make_contact(db, account, "Jane", "Doe", email="jane@acme.test")
    msg = await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="Pricing")
    await make_endpoint(client, actor, receiver.url, eventTypes=["feed_message.*"])
    raw = (
        "From: Jane <jane@acme.test>\r\nTo: sales@example.com\r\nSubject: Re: Pricing\r\n"
        "Message-ID: <r1@acme.test>\r\n"
        f"In-Reply-To: {msg.rfc_message_id}\r\nReferences: {msg.rfc_message_id}\r\n"
        "Content-Type: text/plain\r\n\r\nSounds good.\r\n"
    ).encode()
    await _post_mail(client, db, actor.org.id, raw)
    await _post_mail(client, db, actor.org.id, raw)  # a redelivered mail is stored once
    assert await deliver_due(worker_ctx(app)) == 1
    [event] = [json.loads(r.body) for r in receiver.received]
    assert event["type"] == "feed_message.received"

    api = f"/api/v1/accounts/{account.id}/inbox"
    [thread] = (await client.get(api, headers=actor.in_org())).json()["data"]
    listed = await client.get(f"{api}/threads/{thread['id']}/messages", headers=actor.in_org())
    assert listed.status_code == 200, listed.text
    outbound, received = listed.json()["data"]
    assert outbound["direction"] == "outbound"
    assert received["direction"] == "inbound"
    assert event["data"] == received
