"""Inbound e-mail for an organization: replies threaded to the outbound message they answer,
delivery status notifications (RFC 3464) and complaint reports (RFC 5965)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser, HeaderParser
from email.utils import parseaddr
from typing import Any

import nh3
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.engage.delivery import sequence
from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.scoping import scoped
from salesplan.models.engage import EngageSuppression
from salesplan.models.engage_delivery import EngageMessage, EngageReply

_MSGID = re.compile(r"<[^<>\s]+>")
# At most this many ids of a `References` or `In-Reply-To` header are considered (contract §12):
# a header of 40,000 ids is one lookup of 100, not a statement over the driver's limit.
MAX_REFERENCED_IDS = 100


@dataclass(frozen=True, slots=True)
class OrganizationScope:
    """What `scoped` needs, for requests that carry no token (signed by the organization)."""

    organization_id: uuid.UUID


async def suppress(
    session: AsyncSession, organization_id: uuid.UUID, email: str, reason: str
) -> None:
    """Put an address on the organization's suppression list (the first reason stays), as the
    address it names (kit.email.mailbox: `Opt Out <optout@x.example>` is optout@x.example)."""
    address = mailbox(email)
    if not address:
        return
    scope = OrganizationScope(organization_id)
    exists = (
        await session.execute(
            scoped(select(EngageSuppression.id), scope, EngageSuppression).where(
                EngageSuppression.email == address
            )
        )
    ).first()
    if exists is None:
        session.add(
            EngageSuppression(organization_id=organization_id, email=address, reason=reason)
        )
        await session.flush()
    # A suppressed contact is never sent to again: campaigns stop writing to the address.
    await sequence.stop_for_address(session, organization_id, address, reason)


async def _message_by_rfc_id(
    session: AsyncSession, scope: OrganizationScope, ids: list[str]
) -> EngageMessage | None:
    if not ids:
        return None
    rows = (
        await session.execute(
            scoped(select(EngageMessage), scope).where(EngageMessage.rfc_message_id.in_(ids))
        )
    ).scalars()
    found = {m.rfc_message_id: m for m in rows}
    for candidate in ids:  # In-Reply-To first, then References newest first
        if candidate in found:
            return found[candidate]
    return None


def _ids(value: Any, *, newest: bool = False) -> list[str]:
    """The message ids of a header, at most MAX_REFERENCED_IDS: its first ones, or with
    `newest` its last ones (`References` lists the oldest first)."""
    found = _MSGID.findall(str(value or ""))
    return found[-MAX_REFERENCED_IDS:] if newest else found[:MAX_REFERENCED_IDS]


async def receive_email(session: AsyncSession, organization_id: uuid.UUID, raw: bytes) -> str:
    """Store what the message means; answers what it was (`reply`, `dsn`, `complaint`)."""
    mail = BytesParser(policy=policy.default).parsebytes(raw)
    scope = OrganizationScope(organization_id)
    if mail.get_content_type() == "multipart/report":
        report = str(mail.get_param("report-type") or "").lower()
        if report == "delivery-status":
            await _delivery_status(session, scope, mail)
            return "dsn"
        if report == "feedback-report":
            original = await _message_by_rfc_id(session, scope, _original_ids(mail))
            if original is not None and original.to_address:
                await suppress(session, organization_id, original.to_address, "complaint")
            return "complaint"
    await _reply(session, scope, mail)
    return "reply"


def _original_ids(mail: Message) -> list[str]:
    """The Message-ID of the returned message inside a report."""
    for part in mail.walk():
        kind = part.get_content_type()
        if kind == "text/rfc822-headers":
            payload = part.get_payload(decode=True)
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
            headers = HeaderParser().parsestr(text)
            return _ids(headers.get("Message-ID"))
        if kind == "message/rfc822":
            inner = part.get_payload()
            if isinstance(inner, list) and inner and isinstance(inner[0], Message):
                return _ids(inner[0].get("Message-ID"))
    return _ids(mail.get("In-Reply-To")) + _ids(mail.get("References"), newest=True)


def _status_blocks(mail: Message) -> list[Message]:
    for part in mail.walk():
        if part.get_content_type() == "message/delivery-status":
            payload = part.get_payload()
            if isinstance(payload, list):
                return [p for p in payload if isinstance(p, Message)]
    return []


async def _delivery_status(session: AsyncSession, scope: OrganizationScope, mail: Message) -> None:
    """A DSN changes the one message of this organization it names (its Message-ID), and
    suppresses that message's recipient only."""
    message = await _message_by_rfc_id(session, scope, _original_ids(mail))
    if message is None:
        return
    now = utcnow()
    for block in _status_blocks(mail):
        action = str(block.get("Action") or "").strip().lower()
        status = str(block.get("Status") or "").strip()
        diagnostic = str(block.get("Diagnostic-Code") or "").strip()
        if action == "failed" and status.startswith("5"):
            message.status = "bounced"
            message.bounced_at = message.bounced_at or now
            message.last_error = (f"{status} {diagnostic}".strip())[:1000]
            message.next_attempt_at = None
            # Only the named message's own recipient (contract §12): a report's
            # Final-Recipient is whatever its sender wrote, not a reason to suppress anyone.
            if message.to_address:
                await suppress(session, scope.organization_id, message.to_address, "hard_bounce")
        elif action == "delivered" and message.status in ("sent", "sending"):
            message.status = "delivered"
            message.delivered_at = message.delivered_at or now
    await session.flush()


def _part_text(mail: EmailMessage, subtype: str) -> str | None:
    part = mail.get_body(preferencelist=(subtype,))
    if part is None or part.get_content_type() != f"text/{subtype}":
        return None
    content = part.get_content()
    return content if isinstance(content, str) else None


async def _reply(session: AsyncSession, scope: OrganizationScope, mail: EmailMessage) -> None:
    refs = _ids(mail.get("References"), newest=True)
    message = await _message_by_rfc_id(
        session, scope, _ids(mail.get("In-Reply-To")) + list(reversed(refs))
    )
    raw_html = _part_text(mail, "html")
    html = nh3.clean(raw_html) if raw_html is not None else None
    text = _part_text(mail, "plain")
    if text is None:
        text = nh3.clean(raw_html, tags=set()).strip() if raw_html is not None else ""
    now = utcnow()
    reply = EngageReply(
        organization_id=scope.organization_id,
        message_id=message.id if message is not None else None,
        contact_id=message.contact_id if message is not None else None,
        campaign_id=message.campaign_id if message is not None else None,
        from_address=parseaddr(str(mail.get("From") or ""))[1][:320],
        subject=str(mail.get("Subject") or "")[:998] or None,
        text=text,
        html=html,
        rfc_message_id=next(iter(_ids(mail.get("Message-ID"))), None),
        received_at=now,
        created_at=now,
    )
    session.add(reply)
    if message is not None:
        message.replied_at = message.replied_at or now
        if message.campaign_id is not None and message.contact_id is not None:
            # A reply stops that contact's remaining steps of the campaign.
            await sequence.stop_on_reply(
                session, scope.organization_id, message.campaign_id, message.contact_id
            )
    await session.flush()
