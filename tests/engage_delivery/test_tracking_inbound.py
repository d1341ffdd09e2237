"""Tracking links, one-click unsubscribe, inbound replies and DSNs, analytics."""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import quote

from salesplan.engage.delivery.integrations import inbound_secret
from salesplan.engage.delivery.worker import run_delivery
from salesplan.kit.clock import utcnow
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send


async def delivered(app, client, actor, smtp, **extra: object) -> tuple[dict, object]:
    message = (await send(client, actor, email(**extra))).json()["message"]
    await run_delivery(worker_context(app, smtp))
    return message, smtp.received[-1]


async def test_open_pixel_counts_opens(app, client, actor, smtp) -> None:
    message, mail = await delivered(app, client, actor, smtp)
    html = mail.get_body(("html",)).get_content()
    pixel = re.search(r'src="http://testserver(/t/o/[^"]+)"', html).group(1)
    for _ in range(2):
        response = await client.get(pixel)
        assert response.status_code == 200
        assert response.headers["content-type"] == "image/gif"
    item = (
        await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    ).json()
    assert item["openCount"] == 2
    assert item["openedAt"] is not None


async def test_tampered_open_pixel_is_404(client, actor) -> None:
    message = (await send(client, actor, email())).json()["message"]
    response = await client.get(f"/t/o/{message['id']}/AAAAAAAAAAAAAAAAAAAAAAAA.gif")
    assert response.status_code == 404


async def test_click_redirects_only_to_the_signed_url(app, client, actor, smtp) -> None:
    body_html = '<a href="https://example.com/pricing">pricing</a>'
    message, mail = await delivered(app, client, actor, smtp, bodyHtml=body_html)
    html = mail.get_body(("html",)).get_content()
    link = re.search(r'href="http://testserver(/t/c/[^"]+)"', html).group(1).replace("&amp;", "&")
    response = await client.get(link)
    assert response.status_code == 302
    assert response.headers["location"] == "https://example.com/pricing"
    path = link.split("?", 1)[0]
    evil = await client.get(f"{path}?u={quote('https://evil.example/', safe='')}")
    assert evil.status_code == 404
    item = (
        await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    ).json()
    assert item["clickCount"] == 1
    assert item["clickedAt"] is not None


async def test_one_click_unsubscribe_suppresses_the_address(app, client, actor, smtp) -> None:
    _, mail = await delivered(app, client, actor, smtp)
    url = mail["List-Unsubscribe"].strip("<>").replace("http://testserver", "")
    page = await client.get(url)
    assert page.status_code == 200  # a GET only shows the confirmation
    again_ok = await send(client, actor, email(), key="k-2")
    assert again_ok.status_code == 202
    response = await client.post(url, content=b"List-Unsubscribe=One-Click")
    assert response.status_code == 200
    refused = await send(client, actor, email(), key="k-3")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["suppression"] == "unsubscribed"


async def post_inbound(client, org_id, raw: bytes, secret: str | None) -> object:
    headers = {"Content-Type": "message/rfc822"}
    if secret is not None:
        digest = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
        headers["X-Salesplan-Signature"] = f"sha256={digest}"
    return await client.post(
        f"/inbound/email?organizationId={org_id}", content=raw, headers=headers
    )


async def secret_of(app, db, actor) -> str:
    secret = await inbound_secret(db, app.state.settings, actor.org.id, create=True)
    await db.commit()
    assert secret is not None
    return secret


def reply_to(message_id: str, html: bool = True) -> bytes:
    parts = [
        "From: Ada <ada@example.com>",
        "To: sales@example.com",
        "Subject: Re: Hi",
        "Message-ID: <reply-1@example.com>",
        f"In-Reply-To: {message_id}",
        f"References: {message_id}",
        "MIME-Version: 1.0",
        'Content-Type: multipart/alternative; boundary="b1"',
        "",
        "--b1",
        "Content-Type: text/plain; charset=utf-8",
        "",
        "Yes, let's talk.",
        "--b1",
        "Content-Type: text/html; charset=utf-8",
        "",
        "<p>Yes, <b>let's</b> talk.<script>alert(1)</script></p>",
        "--b1--",
        "",
    ]
    return "\r\n".join(parts).encode()


async def test_inbound_without_or_with_a_bad_signature_is_401(app, client, actor, db) -> None:
    await secret_of(app, db, actor)
    raw = reply_to("<x@example.com>")
    assert (await post_inbound(client, actor.org.id, raw, None)).status_code == 401
    assert (await post_inbound(client, actor.org.id, raw, "wrong")).status_code == 401


async def test_reply_is_threaded_and_html_only_on_request(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    response = await post_inbound(client, actor.org.id, reply_to(message["messageId"]), secret)
    assert response.status_code == 202
    replies = (await client.get("/api/v1/engage/replies", headers=actor.in_org())).json()
    assert replies["pagination"]["totalCount"] == 1
    reply = replies["data"][0]
    assert reply["messageId"] == message["id"]
    assert reply["text"].strip() == "Yes, let's talk."
    assert "html" not in reply
    one = await client.get(
        f"/api/v1/engage/replies/{reply['id']}?includeHtml=true", headers=actor.in_org()
    )
    assert "<b>let's</b>" in one.json()["html"]
    assert "script" not in one.json()["html"]
    plain = await client.get(f"/api/v1/engage/replies/{reply['id']}", headers=actor.in_org())
    assert "html" not in plain.json()
    item = (
        await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    ).json()
    assert item["repliedAt"] is not None


def dsn(message_id: str, action: str, status: str) -> bytes:
    parts = [
        "From: MAILER-DAEMON@mx.example.com",
        "To: sales@example.com",
        "Subject: Delivery Status Notification",
        "MIME-Version: 1.0",
        'Content-Type: multipart/report; report-type=delivery-status; boundary="r1"',
        "",
        "--r1",
        "Content-Type: text/plain",
        "",
        "Delivery report.",
        "--r1",
        "Content-Type: message/delivery-status",
        "",
        "Reporting-MTA: dns; mx.example.com",
        "",
        "Final-Recipient: rfc822; ada@example.com",
        f"Action: {action}",
        f"Status: {status}",
        "Diagnostic-Code: smtp; 550 5.1.1 user unknown",
        "",
        "--r1",
        "Content-Type: text/rfc822-headers",
        "",
        f"Message-ID: {message_id}",
        "Subject: Hi",
        "",
        "--r1--",
        "",
    ]
    return "\r\n".join(parts).encode()


async def test_failure_dsn_bounces_and_suppresses(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = dsn(message["messageId"], "failed", "5.1.1")
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = (
        await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    ).json()
    assert item["status"] == "bounced"
    assert "5.1.1" in item["lastError"]
    refused = await send(client, actor, email(), key="k-2")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["suppression"] == "hard_bounce"


async def test_success_dsn_marks_delivered(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = dsn(message["messageId"], "delivered", "2.0.0")
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = (
        await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    ).json()
    assert item["status"] == "delivered"
    assert item["deliveredAt"] is not None


async def test_analytics_counts_per_day(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    await delivered(app, client, actor, smtp)  # replayed key: still one message
    await post_inbound(client, actor.org.id, reply_to(message["messageId"]), secret)
    response = await client.get("/api/v1/engage/analytics", headers=actor.in_org())
    assert response.status_code == 200
    data = response.json()
    assert len(data["days"]) == 30
    today = next(d for d in data["days"] if d["date"] == utcnow().date().isoformat())
    assert today["sent"] == 1
    assert today["replied"] == 1
    assert today["bounced"] == 0
    assert data["totals"]["sent"] == 1


async def test_analytics_from_after_to_is_400(client, actor) -> None:
    response = await client.get(
        "/api/v1/engage/analytics?from=2026-02-01&to=2026-01-01", headers=actor.in_org()
    )
    assert response.status_code == 400


def complaint(message_id: str) -> bytes:
    parts = [
        "From: feedback@isp.example",
        "To: sales@example.com",
        "Subject: Complaint",
        "MIME-Version: 1.0",
        'Content-Type: multipart/report; report-type=feedback-report; boundary="f1"',
        "",
        "--f1",
        "Content-Type: text/plain",
        "",
        "A user marked this as spam.",
        "--f1",
        "Content-Type: message/feedback-report",
        "",
        "Feedback-Type: abuse",
        "User-Agent: isp/1.0",
        "Version: 1",
        "",
        "--f1",
        "Content-Type: text/rfc822-headers",
        "",
        f"Message-ID: {message_id}",
        "",
        "--f1--",
        "",
    ]
    return "\r\n".join(parts).encode()


async def test_a_spam_complaint_suppresses_the_address(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    response = await post_inbound(client, actor.org.id, complaint(message["messageId"]), secret)
    assert response.status_code == 202
    refused = await send(client, actor, email(), key="k-2")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["suppression"] == "complaint"


async def test_a_reply_cancels_the_contacts_remaining_campaign_steps(
    app, client, actor, db, smtp
) -> None:
    import uuid
    from datetime import timedelta

    from salesplan.engage.delivery.queue import outbox_message
    from tests.fixtures.crm import make_account, make_contact

    secret = await secret_of(app, db, actor)
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
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
    response = await post_inbound(client, actor.org.id, reply_to(steps[0].rfc_message_id), secret)
    assert response.status_code == 202
    queue = (
        await client.get(f"/api/v1/engage/queue?campaignId={campaign}", headers=actor.in_org())
    ).json()["data"]
    statuses = {item["subject"]: item["status"] for item in queue}
    assert statuses == {"Step 0": "sent", "Step 1": "cancelled", "Step 2": "cancelled"}
