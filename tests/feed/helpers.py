"""Arranging feed data: engage messages and replies, calendar events, signed Slack events."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.calendar.events import CalendarEventUpdated
from salesplan.engage.delivery.events import ReplyReceived
from salesplan.engage.delivery.integrations import inbound_secret, set_integration
from salesplan.feed.ingest import engage_message_sent
from salesplan.feed.slack import signature
from salesplan.kit.events import emit
from salesplan.kit.uow import commit
from salesplan.models.calendar import CalendarActionItem, CalendarConnection, CalendarEvent
from salesplan.models.engage_delivery import EngageMessage, EngageReply

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)  # a Monday


async def sent_email(
    db: AsyncSession,
    org_id: uuid.UUID,
    to: str,
    at: datetime,
    *,
    subject: str = "Hello",
    body: str = "Hi there",
    replied_at: datetime | None = None,
) -> EngageMessage:
    m = EngageMessage(
        organization_id=org_id,
        channel="EMAIL",
        to_address=to,
        subject=subject,
        body=body,
        status="sent",
        rfc_message_id=f"<{uuid.uuid4().hex}@salesplan.test>",
        sent_at=at,
        created_at=at,
        replied_at=replied_at,
    )
    db.add(m)
    await db.flush()
    # As the delivery worker does when the relay accepts it (engage/delivery/worker.py).
    await (await db.connection()).run_sync(engage_message_sent, m, at, "sales@example.com")
    await db.commit()
    return m


async def reply_to(
    db: AsyncSession,
    message: EngageMessage | None,
    org_id: uuid.UUID,
    sender: str,
    at: datetime,
    text: str = "Thanks!",
) -> EngageReply:
    r = EngageReply(
        organization_id=org_id,
        message_id=message.id if message else None,
        from_address=sender,
        subject="Re: " + (message.subject or "" if message else "hi"),
        text=text,
        rfc_message_id=f"<{uuid.uuid4().hex}@customer.test>",
        received_at=at,
        created_at=at,
    )
    db.add(r)
    await db.flush()
    # As the inbound route does when it stores a reply (engage/delivery/inbound.py).
    emit(db, ReplyReceived(r.id))
    await commit(db)
    return r


async def meeting(
    db: AsyncSession,
    org_id: uuid.UUID,
    user_id: uuid.UUID,
    attendees: list[str],
    start: datetime,
    *,
    title: str = "Discovery call",
    open_items: int = 0,
) -> CalendarEvent:
    conn = CalendarConnection(
        organization_id=org_id,
        user_id=user_id,
        url=f"http://cal.test/{uuid.uuid4().hex}/",
        username="u",
        password_encrypted="x",
    )
    db.add(conn)
    await db.flush()
    event = CalendarEvent(
        organization_id=org_id,
        connection_id=conn.id,
        user_id=user_id,
        href=f"{conn.url}e.ics",
        uid=uuid.uuid4().hex,
        title=title,
        start_at=start,
        end_at=start + timedelta(hours=1),
        attendees=[{"email": a, "name": a.split("@")[0], "status": None} for a in attendees],
    )
    db.add(event)
    await db.flush()
    for i in range(open_items):
        db.add(
            CalendarActionItem(
                organization_id=org_id, event_id=event.id, position=i, text=f"Follow up {i}"
            )
        )
    await meeting_changed(db, event)
    return event


async def meeting_changed(db: AsyncSession, event: CalendarEvent) -> None:
    """Commit a new or changed event as the calendar's writes do (calendar/sync.py): the
    feed's meeting thread follows it in the same transaction."""
    await db.flush()
    emit(db, CalendarEventUpdated(event.organization_id, event))
    await commit(db)


async def enable_slack(db: AsyncSession, app: Any, org_id: uuid.UUID) -> None:
    await set_integration(db, app.state.settings, org_id, slack_signing_secret=SLACK_SECRET)
    await db.commit()


def slack_event(
    text: str,
    *,
    email: str | None,
    ts: str,
    thread_ts: str | None = None,
    channel: str = "C0SHARED",
    event_id: str | None = None,
    name: str = "Jane",
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel,
        "user": "U123",
        "text": text,
        "ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    if email is not None:
        event["user_profile"] = {"email": email, "real_name": name}
    return {
        "token": "legacy",
        "team_id": "T1",
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10]}",
        "event_time": int(float(ts)),
        "event": event,
    }


async def post_slack(
    client: httpx.AsyncClient,
    org_id: uuid.UUID,
    payload: dict[str, Any],
    *,
    secret: str = SLACK_SECRET,
    timestamp: int | None = None,
    headers: dict[str, str] | None = None,
    sign: bool = True,
) -> httpx.Response:
    body = orjson.dumps(payload)
    ts = str(timestamp if timestamp is not None else int(time.time()))
    h = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts}
    if sign:
        h["X-Slack-Signature"] = signature(secret, ts, body)
    h.update(headers or {})
    return await client.post(
        "/inbound/slack", params={"organizationId": str(org_id)}, content=body, headers=h
    )


async def post_mail(
    client: httpx.AsyncClient, db: AsyncSession, org_id: uuid.UUID, raw: bytes
) -> httpx.Response:
    """A raw RFC 5322 message posted to the signed inbound e-mail endpoint (contract §11)."""
    settings = client._transport.app.state.settings  # type: ignore[attr-defined]
    secret = await inbound_secret(db, settings, org_id, create=True)
    await db.commit()
    sig = "sha256=" + hmac.new(str(secret).encode(), raw, hashlib.sha256).hexdigest()
    return await client.post(
        "/inbound/email",
        params={"organizationId": str(org_id)},
        content=raw,
        headers={"X-Salesplan-Signature": sig, "Content-Type": "message/rfc822"},
    )


def reply_mail(
    sender: str, original: EngageMessage | str | None, text: str, *, subject: str = "Re"
) -> bytes:
    """A reply from `sender` to `original` (a message or its Message-ID, threaded by
    In-Reply-To), or a new mail."""
    ref = original.rfc_message_id if isinstance(original, EngageMessage) else original
    refs = f"In-Reply-To: {ref}\r\nReferences: {ref}\r\n" if ref else ""
    return (
        f"From: {sender}\r\nTo: sales@example.com\r\nSubject: {subject}\r\n"
        f"Message-ID: <{uuid.uuid4().hex}@customer.test>\r\n{refs}"
        f"Content-Type: text/plain\r\n\r\n{text}\r\n"
    ).encode()
