"""Shares (contract §16): create with `contactId` or `email`, the link shown once and stored
only as a hash, list, revoke, send through the Engage outbox."""

from __future__ import annotations

import base64
import hashlib
import uuid
from datetime import timedelta

from sqlalchemy import select, text

from salesplan.kit.clock import isoformat, utcnow
from salesplan.models.crm import Contact
from salesplan.models.engage_delivery import EngageMessage
from salesplan.models.rooms import PlanShare, PlanShareLink
from tests.engage_delivery.conftest import smtp
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor
from tests.plans.helpers import PLANS, new_plan
from tests.rooms.helpers import (
    DOMAIN,
    SELLER_EMAIL,
    deliver,
    link_in,
    mail_text,
    make_deal,
    make_share,
    suppress,
    token_of,
)

__all__ = ["smtp"]

SHARE_KEYS = {
    "id", "planId", "contactId", "email", "role", "status", "allowInvites", "invitedByShareId",
    "expiresAt", "lastViewedAt", "createdAt",
}  # fmt: skip


async def test_a_share_answers_its_link_once_and_keeps_only_its_hash(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, role="viewer")
    assert set(share) == SHARE_KEYS | {"url"}
    assert share["status"] == "active" and share["role"] == "viewer"
    assert share["contactId"] == str(deal.ada.id) and share["email"] == f"ada@{DOMAIN}"
    assert share["allowInvites"] is False and share["invitedByShareId"] is None
    assert share["url"].startswith("http://testserver/rooms/")
    token = token_of(share["url"])
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert len(raw) >= 32
    stored = (await db.execute(select(PlanShareLink.token_hash))).scalars().all()
    assert stored == [hashlib.sha256(token.encode()).hexdigest()]
    # The token is nowhere in the database, in any table.
    for table in ("plan_shares", "plan_share_links"):
        rows = (await db.execute(text(f"SELECT * FROM {table}"))).all()
        assert token not in repr(rows)
    listed = await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=actor.in_org())
    assert listed.status_code == 200
    assert [set(s) for s in listed.json()["data"]] == [SHARE_KEYS]
    assert "url" not in listed.text and token not in listed.text


async def test_an_email_on_the_accounts_domain_creates_its_contact(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, email=f"New.Person@{DOMAIN.upper()}")
    contact = await db.get(Contact, uuid.UUID(share["contactId"]))
    assert contact is not None and contact.account_id == deal.account.id
    assert share["email"] == f"new.person@{DOMAIN}"
    # The same address again finds that contact.
    again = await make_share(client, deal, email=f"new.person@{DOMAIN}")
    assert again["contactId"] == share["contactId"]
    # An existing contact's address finds it.
    ada = await make_share(client, deal, email=f"ada@{DOMAIN}", role="viewer")
    assert ada["contactId"] == str(deal.ada.id)


async def test_an_email_off_the_accounts_domain_is_a_422(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    for address in ("eve@evil.example", f"eve@sub.{DOMAIN}", f"eve@{DOMAIN}.evil.example"):
        resp = await client.post(
            f"{PLANS}/{deal.plan_id}/shares",
            json={"email": address, "role": "viewer"},
            headers=actor.in_org(),
        )
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == "email"
    count = (await db.execute(select(Contact).where(Contact.email == "eve@evil.example"))).all()
    assert count == []


async def test_a_contact_must_be_of_the_plans_account(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    from tests.fixtures.crm import make_account, make_contact

    other, _ = await make_account(db, actor.org.id, "Other", domain="other.example")
    stranger = await make_contact(db, other, "Stan", "Ger")
    for contact_id in (str(stranger.id), "00000000-0000-4000-8000-000000000000"):
        resp = await client.post(
            f"{PLANS}/{deal.plan_id}/shares",
            json={"contactId": contact_id, "role": "viewer"},
            headers=actor.in_org(),
        )
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == "contactId"


async def test_a_user_plan_cannot_be_shared(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, entityType="USER", entityId=str(actor.user.id))
    resp = await client.post(
        f"{PLANS}/{plan['id']}/shares",
        json={"email": "x@example.com", "role": "viewer"},
        headers=actor.in_org(),
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "plan_not_shareable"


async def test_bad_bodies_are_400s_and_past_expiry_a_422(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    url = f"{PLANS}/{deal.plan_id}/shares"
    for body in (
        {"role": "viewer"},  # nobody
        {"contactId": str(deal.ada.id), "email": f"ada@{DOMAIN}", "role": "viewer"},  # both
        {"contactId": str(deal.ada.id), "role": "owner"},
        {"contactId": str(deal.ada.id)},  # no role
        {"contactId": str(deal.ada.id), "role": "viewer", "url": "x"},  # unknown property
        {"email": "not-an-address", "role": "viewer"},
    ):
        resp = await client.post(url, json=body, headers=actor.in_org())
        assert_envelope(resp, 400, "validation_error")
    past = isoformat(utcnow() - timedelta(minutes=1))
    resp = await client.post(
        url,
        json={"contactId": str(deal.ada.id), "role": "viewer", "expiresAt": past},
        headers=actor.in_org(),
    )
    assert_envelope(resp, 422, "unprocessable")


async def test_revoke_is_a_204_every_time_and_another_organizations_share_is_a_404(
    client, db, actor
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    path = f"{PLANS}/{deal.plan_id}/shares/{share['id']}"
    for _ in range(2):
        resp = await client.delete(path, headers=actor.in_org())
        assert resp.status_code == 204 and resp.content == b""
    listed = await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=actor.in_org())
    assert listed.json()["data"][0]["status"] == "revoked"
    other = await make_actor(db)
    assert_envelope(await client.delete(path, headers=other.in_org()), 404, "not_found")
    assert_envelope(
        await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=other.in_org()), 404, "not_found"
    )


async def test_expired_shares_are_listed_expired(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    soon = isoformat(utcnow() + timedelta(hours=1))
    share = await make_share(client, deal, expiresAt=soon)
    row = await db.get(PlanShare, uuid.UUID(share["id"]))
    assert row is not None
    row.expires_at = utcnow() - timedelta(seconds=1)
    await db.commit()
    listed = await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=actor.in_org())
    assert listed.json()["data"][0]["status"] == "expired"


async def test_scopes_are_plans_read_and_plans_write(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    reader = await make_actor(db, scopes=["plans:read"])
    # another organization's reader: the plan is not found; the same organization's is forbidden
    from tests.fixtures.factories import make_key

    key = await make_key(db, actor.user, scopes=["plans:read"])
    headers = {"Authorization": f"Bearer {key}", "X-Organization-Id": str(actor.org.id)}
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/shares",
        json={"contactId": str(deal.ada.id), "role": "viewer"},
        headers=headers,
    )
    assert_envelope(resp, 403, "forbidden")
    assert (await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=headers)).status_code == 200
    resp = await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=reader.in_org())
    assert_envelope(resp, 404, "not_found")


async def test_send_emails_a_link_of_its_own_through_the_outbox(
    app, client, db, actor, smtp
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/shares/{share['id']}/send", headers=actor.in_org()
    )
    assert resp.status_code == 202, resp.text
    message = resp.json()["message"]
    assert message["to"] == f"ada@{DOMAIN}" and message["status"] == "queued"
    # The queue item shows a placeholder: the link lives only in the e-mail.
    assert "[room link]" in message["body"] and "/rooms/" not in message["body"]
    queued = await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    assert "/rooms/" not in queued.text
    sealed = (await db.execute(select(EngageMessage.sealed))).scalar_one()
    assert sealed is not None and "/rooms/" not in sealed
    assert await deliver(app, smtp) == 1
    mail = smtp.received[-1]
    assert mail["To"] == f"ada@{DOMAIN}"
    assert "Buyer Inc rollout" in mail["Subject"]
    assert SELLER_EMAIL not in mail.as_string()
    link = link_in(mail)
    assert link != share["url"]  # a link of its own, of the same share
    assert "[room link]" not in mail_text(mail)
    # Once sent, no secret stays in the outbox.
    db.expire_all()
    assert (await db.execute(select(EngageMessage.sealed))).scalar_one() is None
    async with __import__("httpx").AsyncClient(
        transport=__import__("httpx").ASGITransport(app=app), base_url="http://testserver"
    ) as browser:
        for url in (share["url"], link):
            page = await browser.get(url.removeprefix("http://testserver"))
            assert page.status_code == 200 and "Buyer Inc rollout" in page.text


async def test_send_honours_suppression_and_refuses_a_dead_share(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    await suppress(db, actor, f"ada@{DOMAIN}")
    send = f"{PLANS}/{deal.plan_id}/shares/{share['id']}/send"
    resp = await client.post(send, headers=actor.in_org())
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "suppressed"
    assert (await db.execute(select(EngageMessage))).all() == []
    other = await make_share(client, deal, contactId=str(deal.grace.id))
    await client.delete(f"{PLANS}/{deal.plan_id}/shares/{other['id']}", headers=actor.in_org())
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/shares/{other['id']}/send", headers=actor.in_org()
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "share_revoked"
