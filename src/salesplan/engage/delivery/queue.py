"""The outbox queue: queue a send (validated, rendered, suppression and sender pauses
checked), read the queue and the replies, and the delivery analytics."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.engage import templates as engage_templates
from salesplan.engage.delivery import repository
from salesplan.engage.delivery.events import MessageClicked, MessageOpened
from salesplan.engage.delivery.integrations import slack_webhook_url
from salesplan.engage.delivery.schemas import (
    AnalyticsDay,
    AnalyticsOut,
    AnalyticsTotals,
    SendMessageIn,
)
from salesplan.engage.render import RenderFailure
from salesplan.engage.repository import QueueRepository, ReplyRepository
from salesplan.engage.repository import count_engagement as count_message_engagement
from salesplan.errors import RateLimited, Unprocessable, ValidationFailed
from salesplan.kit.clock import isoformat, utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.events import emit
from salesplan.kit.ids import uuid7
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope
from salesplan.models.crm import Contact
from salesplan.models.engage_delivery import EngageMessage, EngageReply
from salesplan.worker.context import wake_worker

METRICS = ("sent", "delivered", "opened", "clicked", "replied", "bounced")


def sender_of(channel: str, organization_id: uuid.UUID) -> str | None:
    """The sender a provider can pause: the SMTP relay, or an organization's Slack webhook."""
    if channel == "EMAIL":
        return "smtp"
    if channel == "SLACK":
        return f"slack:{organization_id}"
    return None


def rfc_message_id(message_id: uuid.UUID, settings: Settings) -> str:
    domain = settings.smtp_from.rpartition("@")[2].strip("> ") or "localhost"
    return f"<{message_id}@{domain}>"


def normalize_email(address: str) -> str:
    """The address as the suppression list holds it (kit.email.mailbox)."""
    return mailbox(address)


async def is_suppressed(session: AsyncSession, ctx: TenantScope, email: str) -> str | None:
    """The reason the address is suppressed in the organization, or None."""
    return await repository.suppression_reason(session, ctx, normalize_email(email))


async def message_content(
    session: AsyncSession, ctx: RequestContext, data: SendMessageIn, contact: Contact | None
) -> tuple[str | None, str, str | None, str | None]:
    """(subject, body, bodyHtml, renderFailure) of a send: a template's or draft's text rendered
    for the contact (subject and body sent beside them win), else the subject and body sent.
    When the render stops (contract §12: over its time or output budget, or an error) the
    sources come back unrendered with the reason, and the message is written `failed`."""
    if data.template_id is None and data.draft_id is None:
        return data.subject, data.body or "", data.body_html, None
    subject, body, body_html = await engage_templates.sendable_content(
        session, ctx, channel=data.channel, template_id=data.template_id, draft_id=data.draft_id
    )
    subject = data.subject if data.subject is not None else subject
    body = data.body or body
    body_html = data.body_html if data.body_html is not None else body_html
    rendered = await engage_templates.try_render_for_contact(
        session, ctx, contact, subject, body, body_html
    )
    if isinstance(rendered, RenderFailure):
        return subject, body, body_html, rendered.reason
    return rendered.subject, rendered.body, rendered.body_html, None


async def send_message(
    session: AsyncSession, ctx: RequestContext, settings: Settings, data: SendMessageIn
) -> EngageMessage:
    """Validate a send and write its outbox row (the caller commits it with the idempotency
    record)."""
    if data.contact_id is None and data.to is None:
        raise ValidationFailed.at(["body", "contactId"], "Give contactId or to.")
    if data.template_id is None and data.draft_id is None:
        if not data.body:
            raise ValidationFailed.at(["body", "body"], "body is required.")
        if data.channel == "EMAIL" and not data.subject:
            raise ValidationFailed.at(["body", "subject"], "subject is required for EMAIL.")

    contact: Contact | None = None
    if data.contact_id is not None:
        contact = await repository.contact(session, ctx, data.contact_id)
        if contact is None or contact.archived_at is not None:
            raise Unprocessable("The contact does not exist.", details={"field": "contactId"})
    to = data.to
    if data.channel == "EMAIL":
        to = to or (contact.email if contact is not None else None)
        if not to:
            raise Unprocessable("The contact has no e-mail address.", details={"field": "to"})
        if "@" not in to:
            raise ValidationFailed.at(["body", "to"], "to must be an e-mail address.")
        reason = await is_suppressed(session, ctx, to)
        if reason is not None:
            raise Unprocessable(
                "The address is on the organization's suppression list.",
                details={"field": "to", "reason": "suppressed", "suppression": reason},
            )

    if data.channel == "SLACK" and not await slack_webhook_url(
        session, settings, ctx.organization_id
    ):
        raise Unprocessable(
            "The organization has no Slack webhook configured "
            "(salesplan admin set-integration --slack-webhook-url).",
            details={"field": "channel", "reason": "slack_not_configured"},
        )
    subject, body, body_html, render_failure = await message_content(session, ctx, data, contact)
    now = utcnow()
    scheduled = data.scheduled_at
    if scheduled is not None and scheduled.tzinfo is None:
        scheduled = scheduled.replace(tzinfo=UTC)
    in_future = scheduled is not None and scheduled > now
    sender = sender_of(data.channel, ctx.organization_id)
    if sender is not None and not in_future and render_failure is None:
        until = await repository.paused_until(session, sender)
        if until is not None:
            seconds = max(1, math.ceil((until - now).total_seconds()))
            raise RateLimited(
                "The provider throttled this sender; try again after retryAt, or schedule "
                "the message.",
                details={
                    "retryAt": isoformat(until),
                    "retryAfterSeconds": seconds,
                    "endpointGroup": "engage_send",
                    "write": True,
                    "reason": "provider_throttled",
                },
                headers={"Retry-After": str(seconds)},
            )

    message = outbox_message(
        settings,
        organization_id=ctx.organization_id,
        channel=data.channel,
        contact_id=contact.id if contact is not None else None,
        to=to,
        subject=subject,
        body=body,
        body_html=body_html,
        send_at=scheduled if in_future else None,
    )
    if render_failure is not None:
        fail_unrendered(message, render_failure)
    session.add(message)
    await session.flush()
    if not message.manual and render_failure is None:
        await wake_worker(session)
    return message


def fail_unrendered(message: EngageMessage, reason: str) -> None:
    """A message whose render stopped (contract §12): `failed`, never taken by the worker, its
    `lastError` the reason (template_too_expensive or template_error)."""
    message.status = "failed"
    message.last_error = reason
    message.next_attempt_at = None
    message.scheduled_at = None


def outbox_message(
    settings: Settings,
    *,
    organization_id: uuid.UUID,
    channel: str,
    contact_id: uuid.UUID | None,
    to: str | None,
    subject: str | None,
    body: str,
    body_html: str | None = None,
    send_at: datetime | None = None,
    campaign_id: uuid.UUID | None = None,
    enrollment_id: uuid.UUID | None = None,
    step_index: int | None = None,
) -> EngageMessage:
    """A new outbox row (also what campaign steps are queued as): `scheduled` for a future
    `send_at`, else `queued`; LINKEDIN is a `manual` item the worker never takes. The caller
    adds it to its session (and calls `wake_worker`)."""
    now = utcnow()
    message_id = uuid7()
    manual = channel == "LINKEDIN"
    in_future = send_at is not None and send_at > now
    return EngageMessage(
        id=message_id,
        organization_id=organization_id,
        channel=channel,
        contact_id=contact_id,
        campaign_id=campaign_id,
        enrollment_id=enrollment_id,
        step_index=step_index,
        to_address=to,
        subject=subject,
        body=body,
        body_html=body_html,
        status="scheduled" if in_future else "queued",
        manual=manual,
        scheduled_at=send_at if in_future else None,
        next_attempt_at=None if manual else (send_at if in_future else now),
        rfc_message_id=rfc_message_id(message_id, settings),
        created_at=now,
        updated_at=now,
    )


async def list_queue(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None,
    campaign_id: uuid.UUID | None,
    contact_id: uuid.UUID | None,
) -> tuple[list[EngageMessage], PaginationMeta]:
    return await QueueRepository(session, ctx).page(
        params, codec, status=status, campaign_id=campaign_id, contact_id=contact_id
    )


async def get_queue_item(
    session: AsyncSession, ctx: RequestContext, message_id: uuid.UUID
) -> EngageMessage:
    return await QueueRepository(session, ctx).get(message_id)


async def list_replies(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    message_id: uuid.UUID | None,
    contact_id: uuid.UUID | None,
    campaign_id: uuid.UUID | None,
) -> tuple[list[EngageReply], PaginationMeta]:
    return await ReplyRepository(session, ctx).page(
        params, codec, message_id=message_id, contact_id=contact_id, campaign_id=campaign_id
    )


async def get_reply(session: AsyncSession, ctx: RequestContext, reply_id: uuid.UUID) -> EngageReply:
    return await ReplyRepository(session, ctx).get(reply_id)


async def analytics(
    session: AsyncSession,
    ctx: RequestContext,
    *,
    start: date | None,
    end: date | None,
    campaign_id: uuid.UUID | None,
) -> AnalyticsOut:
    """Counts per day, computed in one SQL statement: each metric is the day its timestamp
    fell on (a message opened five times counts once, on the day of its first open)."""
    end = end or utcnow().date()
    if end >= date.max or (start is None and end < date.min + timedelta(days=29)):
        # The default window and the day after `to` must be dates (else an OverflowError).
        raise ValidationFailed.at(["query", "to"], "to is out of range.")
    start = start or end - timedelta(days=29)
    if start > end:
        raise ValidationFailed.at(["query", "from"], "from must not be after to.")
    if (end - start).days > 366:
        raise ValidationFailed.at(["query", "from"], "The range is at most 366 days.")
    low = datetime(start.year, start.month, start.day, tzinfo=UTC)
    high = datetime(end.year, end.month, end.day, tzinfo=UTC) + timedelta(days=1)
    rows = await repository.analytics_rows(session, ctx, low, high, campaign_id)
    days: dict[date, AnalyticsDay] = {}
    cursor = start
    while cursor <= end:
        days[cursor] = AnalyticsDay(date=cursor)
        cursor += timedelta(days=1)
    totals = AnalyticsTotals()
    for metric, day, count in rows:
        day_value = day if isinstance(day, date) else date.fromisoformat(str(day))
        if day_value in days:
            setattr(days[day_value], metric, int(count))
        setattr(totals, metric, getattr(totals, metric) + int(count))
    return AnalyticsOut(from_=start, to=end, days=list(days.values()), totals=totals)


async def count_engagement(session: AsyncSession, message_id: uuid.UUID, kind: str) -> None:
    """One more open (`kind` "open") or click ("click") of a message (its first one's time
    kept), said as the message's event (webhooks' `engage_message.opened`/`.clicked`)."""
    opened = kind == "open"
    column, first = ("open_count", "opened_at") if opened else ("click_count", "clicked_at")
    await count_message_engagement(session, message_id, column, first)
    message = await session.get(EngageMessage, message_id, populate_existing=True)
    if message is not None:
        event = MessageOpened if opened else MessageClicked
        emit(session, event(message.organization_id, message))
