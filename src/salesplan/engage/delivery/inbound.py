"""Inbound e-mail for an organization: replies threaded to the outbound message they answer,
delivery status notifications (RFC 3464) and complaint reports (RFC 5965)."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser, HeaderParser
from email.utils import parseaddr
from typing import Any

import nh3
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.engage.delivery import repository, sequence_repository
from salesplan.engage.delivery.events import ReplyReceived, SuppressionCreated, message_changed
from salesplan.engage.delivery.mail_bounds import bound_message
from salesplan.errors import ValidationFailed
from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.events import emit
from salesplan.kit.scoping import OrgScope
from salesplan.kit.uow import rollback
from salesplan.models.engage import EngageSuppression
from salesplan.models.engage_delivery import EngageMessage, EngageReply

log = logging.getLogger("salesplan.engage.inbound")

_MSGID = re.compile(r"<[^<>\s]+>")
# At most this many ids of a `References` or `In-Reply-To` header are considered (contract §12):
# a header of 40,000 ids is one lookup of 100, not a statement over the driver's limit.
MAX_REFERENCED_IDS = 100
# Messages are parsed here, never on the event loop (contract §12): two at a time, so that a
# flood of inbound mail takes two threads and leaves the default executor to others.
_PARSERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="salesplan-inbound-parse")


async def suppress(
    session: AsyncSession, organization_id: uuid.UUID, email: str, reason: str
) -> None:
    """Put an address on the organization's suppression list (the first reason stays), as the
    address it names (kit.email.mailbox: `Opt Out <optout@x.example>` is optout@x.example)."""
    address = mailbox(email)
    if not address:
        return
    if not await repository.is_suppressed(session, OrgScope(organization_id), address):
        row = EngageSuppression(organization_id=organization_id, email=address, reason=reason)
        try:
            async with session.begin_nested():  # a savepoint: the caller's transaction goes on
                session.add(row)
        except IntegrityError:
            pass  # suppressed meanwhile by another request: its (first) reason stays
        else:
            emit(session, SuppressionCreated(organization_id, row))
    # A suppressed contact is never sent to again: campaigns stop writing to the address.
    await sequence_repository.stop_for_address(session, organization_id, address, reason)


async def _message_by_rfc_id(
    session: AsyncSession, scope: OrgScope, ids: list[str]
) -> EngageMessage | None:
    if not ids:
        return None
    found = await repository.messages_by_rfc_id(session, scope, ids)
    for candidate in ids:  # In-Reply-To first, then References newest first
        if candidate in found:
            return found[candidate]
    return None


def _ids(value: Any, *, newest: bool = False) -> list[str]:
    """The message ids of a header, at most MAX_REFERENCED_IDS: its first ones, or with
    `newest` its last ones (`References` lists the oldest first)."""
    found = _MSGID.findall(str(value or ""))
    return found[-MAX_REFERENCED_IDS:] if newest else found[:MAX_REFERENCED_IDS]


@dataclass
class Inbound:
    """What a received message says, read before anything is stored."""

    kind: str  # reply | dsn | complaint
    # A report: the returned message's id; a reply: In-Reply-To, then References newest first.
    original_ids: list[str]
    statuses: list[tuple[str, str, str]] = field(default_factory=list)  # action, status, diag.
    from_address: str = ""
    subject: str | None = None
    text: str = ""
    html: str | None = None
    message_id: str | None = None
    auto_reply: bool = False


# Contract §14: what makes an inbound message an auto-reply (RFC 3834 and the vendors' headers).
AUTO_SUBJECTS = ("automatic reply:", "auto:", "out of office")
AUTO_PRECEDENCE = frozenset({"auto_reply", "bulk", "junk"})


def is_auto_reply(mail: Message) -> bool:
    """`Auto-Submitted` other than `no`, `X-Autoreply`, `X-Autorespond`, `Precedence`
    auto_reply/bulk/junk, `X-Auto-Response-Suppress` holding OOF or All, or a subject starting
    "Automatic reply:", "Auto:" or "Out of Office" (case-insensitive)."""
    submitted = _header(mail, "Auto-Submitted").split(";", 1)[0].strip().lower()
    if submitted and submitted != "no":
        return True
    if any(mail.get(name) is not None for name in ("X-Autoreply", "X-Autorespond")):
        return True
    if _header(mail, "Precedence").strip().lower() in AUTO_PRECEDENCE:
        return True
    suppress = {v.strip().lower() for v in _header(mail, "X-Auto-Response-Suppress").split(",")}
    if suppress & {"oof", "all"}:
        return True
    return _header(mail, "Subject").strip().lower().startswith(AUTO_SUBJECTS)


async def receive_email(session: AsyncSession, organization_id: uuid.UUID, raw: bytes) -> str:
    """Store what the message means; answers what it was (`reply`, `dsn`, `complaint`).
    Any charset, malformed MIME and NUL bytes are read best effort (contract §12); a message
    that cannot be read at all is a 400 with `details.reason` `malformed_mail`. The parse runs
    in a worker thread, on a header section bounded first (`read_email`)."""
    try:
        inbound = await asyncio.get_running_loop().run_in_executor(_PARSERS, read_email, raw)
    except Exception:
        log.info("inbound e-mail not readable", exc_info=True)
        raise ValidationFailed(
            "The message cannot be read as an e-mail.", details={"reason": "malformed_mail"}
        ) from None
    scope = OrgScope(organization_id)
    if inbound.kind == "dsn":
        await _delivery_status(session, scope, inbound)
    elif inbound.kind == "complaint":
        original = await _message_by_rfc_id(session, scope, inbound.original_ids)
        if original is not None and original.to_address:
            await suppress(session, organization_id, original.to_address, "complaint")
    else:
        await _reply_once(session, scope, inbound)
    return inbound.kind


def read_email(raw: bytes) -> Inbound:
    """Blocking: what the message says. Its header sections (its own, its MIME parts' and
    its attached messages') are bounded first (mail_bounds: fields, field length, addresses,
    encoded words, message ids, parts), so the parser's cost is."""
    mail = BytesParser(policy=policy.default).parsebytes(bound_message(raw))
    if mail.get_content_type() == "multipart/report":
        report = str(mail.get_param("report-type") or "").lower()
        if report == "delivery-status":
            return Inbound("dsn", _original_ids(mail), _statuses(mail))
        if report == "feedback-report":
            return Inbound("complaint", _original_ids(mail))
    refs = _ids(_header(mail, "References"), newest=True)
    raw_html = _part_text(mail, "html")
    text = _part_text(mail, "plain")
    if text is None:
        text = nh3.clean(raw_html, tags=set()).strip() if raw_html is not None else ""
    return Inbound(
        "reply",
        _ids(_header(mail, "In-Reply-To")) + list(reversed(refs)),
        from_address=parseaddr(_header(mail, "From"))[1][:320],
        subject=_header(mail, "Subject")[:998] or None,
        text=text,
        html=nh3.clean(raw_html) if raw_html is not None else None,
        message_id=next(iter(_ids(_header(mail, "Message-ID"))), None),
        auto_reply=is_auto_reply(mail),
    )


def _clean(text: str) -> str:
    """Storable text: bytes the parser kept as surrogates decoded as UTF-8 with replacement,
    NUL characters dropped (PostgreSQL's text cannot hold them)."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\x00", "")


def _header(mail: Message, name: str) -> str:
    """A header's text, best effort: the raw value when the policy cannot parse it."""
    try:
        value = str(mail.get(name) or "")
    except Exception:
        value = next((str(v) for k, v in mail.raw_items() if k.lower() == name.lower()), "")
    return _clean(value)


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
    return _ids(_header(mail, "In-Reply-To")) + _ids(_header(mail, "References"), newest=True)


def _statuses(mail: Message) -> list[tuple[str, str, str]]:
    """(action, status, diagnostic) of each recipient block of a DSN's delivery-status part."""
    for part in mail.walk():
        if part.get_content_type() == "message/delivery-status":
            payload = part.get_payload()
            if isinstance(payload, list):
                return [
                    (
                        _header(block, "Action").strip().lower(),
                        _header(block, "Status").strip(),
                        _header(block, "Diagnostic-Code").strip(),
                    )
                    for block in payload
                    if isinstance(block, Message)
                ]
    return []


async def _delivery_status(session: AsyncSession, scope: OrgScope, inbound: Inbound) -> None:
    """A DSN changes the one message of this organization it names (its Message-ID), and
    suppresses that message's recipient only. Contract §14: a 5.x.x status is a hard bounce
    (the message `bounced`, its address suppressed); a 4.x.x one is soft (`lastError` says
    so, the message stays `sent`, nobody is suppressed)."""
    message = await _message_by_rfc_id(session, scope, inbound.original_ids)
    if message is None:
        return
    now = utcnow()
    for action, status, diagnostic in inbound.statuses:
        problem = (f"{status} {diagnostic}".strip())[:1000]
        if status.startswith("5") and action in ("failed", ""):
            message.status = "bounced"
            message.bounced_at = message.bounced_at or now
            message.last_error = problem
            message.next_attempt_at = None
            # Only the named message's own recipient (contract §12): a report's
            # Final-Recipient is whatever its sender wrote, not a reason to suppress anyone.
            if message.to_address:
                await suppress(session, scope.organization_id, message.to_address, "hard_bounce")
        elif status.startswith("4") and action in ("failed", "delayed", ""):
            if message.status != "bounced":
                message.last_error = f"soft bounce: {problem}"[:1000]
        elif action == "delivered" and message.status in ("sent", "sending"):
            message.status = "delivered"
            message.delivered_at = message.delivered_at or now
    await session.flush()
    _said(session, message, now)


def _said(session: AsyncSession, message: EngageMessage, now: datetime) -> None:
    """What the report or reply did to the message, said as its event (webhooks, §13)."""
    event = message_changed(message, now)
    if event is not None:
        emit(session, event)


def _part_text(mail: EmailMessage, subtype: str) -> str | None:
    """The text of the message's text/`subtype` body, decoded best effort: an unknown or
    broken charset is read as UTF-8 with replacement characters."""
    try:
        part = mail.get_body(preferencelist=(subtype,))
    except Exception:
        return None
    if part is None or part.get_content_type() != f"text/{subtype}":
        return None
    try:
        content = part.get_content()
        if isinstance(content, str):
            return _clean(content)
    except Exception:  # an unknown charset (LookupError), a broken transfer encoding
        pass
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return None
    charset = str(part.get_content_charset() or "utf-8")
    try:
        text = payload.decode(charset, "replace")
    except LookupError:
        text = payload.decode("utf-8", "replace")
    return _clean(text)


async def _reply_once(session: AsyncSession, scope: OrgScope, inbound: Inbound) -> None:
    """Store the reply once per Message-ID in the organization (contract §12). A delivery
    repeated later finds it; one at the same moment meets the unique index: its transaction is
    rolled back (it wrote nothing else) and it answers as the first did."""
    rfc_id = inbound.message_id[:255] if inbound.message_id else None
    if rfc_id is not None and await repository.reply_stored(session, scope, rfc_id):
        return
    try:
        await _reply(session, scope, inbound, rfc_id)
    except IntegrityError:
        await rollback(session)  # and forget the events it emitted
        if rfc_id is None or not await repository.reply_stored(session, scope, rfc_id):
            raise


async def _reply(
    session: AsyncSession, scope: OrgScope, inbound: Inbound, rfc_id: str | None
) -> None:
    """The reply, threaded to the message it answers (the feed records it: `ReplyReceived`)."""
    message = await _message_by_rfc_id(session, scope, inbound.original_ids)
    now = utcnow()
    sender = inbound.from_address
    contact_id = message.contact_id if message is not None else None
    if contact_id is None:  # a plain send to an address, or a new mail: the sender's contact
        contact_id = await sequence_repository.contact_of(session, scope.organization_id, sender)
    reply = EngageReply(
        organization_id=scope.organization_id,
        message_id=message.id if message is not None else None,
        contact_id=contact_id,
        campaign_id=message.campaign_id if message is not None else None,
        from_address=inbound.from_address,
        subject=inbound.subject,
        text=inbound.text,
        html=inbound.html,
        rfc_message_id=rfc_id,
        auto_reply=inbound.auto_reply,
        received_at=now,
        created_at=now,
    )
    session.add(reply)
    await session.flush()
    # The feed stores the reply as a message of the account's feed (and says
    # `FeedMessageReceived`) when the transaction commits.
    emit(session, ReplyReceived(reply_id=reply.id))
    if message is not None and not inbound.auto_reply:
        # An auto-reply is listed but answers nothing (contract §14): no repliedAt, not
        # counted as replied, the sequence goes on.
        message.replied_at = message.replied_at or now
        _said(session, message, now)
        if message.campaign_id is not None and message.contact_id is not None:
            # A reply stops that contact's remaining steps of the campaign.
            await sequence_repository.stop_on_reply(
                session,
                scope.organization_id,
                message.campaign_id,
                message.contact_id,
                message.step_index,
            )
    await session.flush()
