"""Campaign start and step scheduling.

`startEngageCampaign` activates a draft campaign and, in the request's transaction (with its
idempotency record), schedules the first step of every enrolled contact: one outbox row per
contact, rendered for it, due `delayMinutes` of the first step from now. From then on the
campaign job kind (`run_campaign_steps`, run by the worker) schedules:

- the first step of contacts enrolled later (state `pending` in an active, started campaign);
- the next step of contacts whose last message went out (state `sent`, set by the delivery
  worker in the transaction that records the send), due `delayMinutes` after `last_sent_at`;
  after the last step the enrollment is `completed`;

and marks an active campaign `completed` once none of its enrollments is live and no
enrollment job of it is still running. A paused campaign's enrollments wait (the job reads
active campaigns only), and its outbox rows are held (`sequence.hold`).

LINKEDIN steps are manual items a person sends by hand; nothing reports that they were sent, so
the sequence counts a manual step as sent at the time it is due and goes on from there.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.engage import campaigns as engage_campaigns
from salesplan.engage import render as merge
from salesplan.engage.delivery import sequence_repository, windows
from salesplan.engage.delivery.queue import fail_unrendered, outbox_message
from salesplan.engage.events import CampaignCompleted, CampaignStarted
from salesplan.errors import Conflict, Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.scoping import OrgScope
from salesplan.models.crm import Account, Contact
from salesplan.models.engage import (
    EngageCampaign,
    EngageEnrollment,
    EngageTemplate,
)
from salesplan.models.identity import Organization, User
from salesplan.worker.context import WorkerContext, wake_worker

log = logging.getLogger("salesplan.worker.campaigns")

Enrollment = EngageEnrollment
# Enrollments scheduled per statement batch (the request's start, and one worker call).
BATCH = 500


async def start_campaign(
    session: AsyncSession, ctx: RequestContext, settings: Settings, campaign_id: uuid.UUID
) -> tuple[EngageCampaign, int, dict[str, int]]:
    """Activate the campaign and schedule every enrolled contact's first step. Answers the
    campaign, how many first steps were scheduled, and the skips by reason.

    A completed campaign is a 422; a campaign already started (active or paused) is a 409
    `conflict` (`details.reason = "already_started"`): resuming a paused one is a PATCH to
    `active`. A draft set `active` by PATCH but never started can be started. A campaign without
    steps starts with nothing to schedule (`started` 0): contract §11 defines `started` as the
    contacts whose first step was scheduled, and names no error for it."""
    campaign = await engage_campaigns.get_campaign(session, ctx, campaign_id)
    # Serialize concurrent starts (with different keys) of one campaign.
    await sequence_repository.lock_campaign(session, campaign.id)
    await session.refresh(campaign)
    if campaign.status == "completed":
        raise Unprocessable(
            "A completed campaign cannot be started.",
            details={"reason": "campaign_completed", "status": campaign.status},
        )
    if campaign.started_at is not None:
        raise Conflict(
            "The campaign was already started.",
            details={"reason": "already_started", "status": campaign.status},
        )
    now = utcnow()
    campaign.status = "active"
    campaign.started_at = now
    campaign.started_by_id = ctx.user_id
    campaign.updated_at = now
    await session.flush()
    emit(session, CampaignStarted(ctx.organization_id, campaign))
    started = 0
    skipped: Counter[str] = Counter()
    last: uuid.UUID | None = None
    while campaign.flow.get("steps"):
        batch = await sequence_repository.pending_enrollments(session, campaign.id, last, BATCH)
        if not batch:
            break
        last = batch[-1].id
        result = await schedule(session, settings, campaign, batch)
        started += result.first_steps
        skipped.update(result.skipped)
    await wake_worker(session)
    return campaign, started, {reason: skipped.get(reason, 0) for reason in SKIPS}


SKIPS = ("no_email", "suppressed")


class Scheduled:
    def __init__(self) -> None:
        self.first_steps = 0
        self.messages = 0
        self.skipped: Counter[str] = Counter()


async def schedule(
    session: AsyncSession,
    settings: Settings,
    campaign: EngageCampaign,
    enrollments: list[EngageEnrollment],
) -> Scheduled:
    """Write the outbox row of each enrollment's step that is due to be scheduled: the first
    (state `pending`) or the one after the step that went out (state `sent`). Four queries for
    the whole batch (templates, contacts, accounts, suppressed addresses), then one render and
    one row per enrollment."""
    result = Scheduled()
    steps: list[dict[str, Any]] = list(campaign.flow.get("steps", []))
    org_id = campaign.organization_id
    scope = OrgScope(org_id)
    template_ids = {uuid.UUID(str(s["templateId"])) for s in steps}
    templates = await sequence_repository.by_id(session, EngageTemplate, scope, template_ids)
    contacts = await sequence_repository.by_id(
        session, Contact, scope, {e.contact_id for e in enrollments}
    )
    account_ids = {c.account_id for c in contacts.values() if c.account_id is not None}
    accounts = (
        await sequence_repository.by_id(session, Account, scope, account_ids) if account_ids else {}
    )
    emails = {c.email_mailbox for c in contacts.values() if c.email_mailbox}
    suppressed: set[str] = set()
    if emails:
        suppressed = await sequence_repository.suppressed_among(session, scope, emails)
    sender = await session.get(User, campaign.started_by_id) if campaign.started_by_id else None
    organization = await session.get(Organization, org_id)
    now = utcnow()

    # First what each enrollment's step is, and the renders it needs; then every render of the
    # batch in one call to the render pool (off the event loop, within its budget).
    planned: list[tuple[EngageEnrollment, int, str, str | None, Any]] = []
    jobs: list[merge.Job] = []
    for enrollment in enrollments:
        first = enrollment.state == "pending"
        index = 0 if first else enrollment.current_step + 1
        if index >= len(steps):
            _finish(enrollment, "completed", None, now)
            continue
        step = steps[index]
        # Later steps count their delay from when the previous one actually went out.
        base = now if first or enrollment.last_sent_at is None else enrollment.last_sent_at
        send_at = base + timedelta(minutes=int(step.get("delayMinutes") or 0))
        contact = contacts.get(enrollment.contact_id)
        template = templates.get(uuid.UUID(str(step["templateId"])))
        channel = str(step["channel"])
        to: str | None = None
        problem: str | None = None
        if contact is None or contact.archived_at is not None:
            problem = "contact_archived"
        elif template is None:
            problem = "template_missing"
        elif channel == "EMAIL":
            to = contact.email
            if not to:
                problem = "no_email"
            elif contact.email_mailbox in suppressed:
                problem = "suppressed"
        elif channel == "LINKEDIN":
            to = contact.linkedin_url
        if problem is not None:
            if first:
                result.skipped[problem] += 1
            _finish(enrollment, "skipped" if first else "stopped", problem, now)
            continue
        assert contact is not None and template is not None
        # A step due outside the campaign's send window waits for its next opening (§14).
        send_at = windows.next_opening(campaign.send_window, send_at, contact.time_zone)
        account = accounts.get(contact.account_id) if contact.account_id else None
        context = merge.merge_context(contact, account, sender, organization)
        jobs.append(merge.Job(template.subject, template.body, template.body_html, context))
        planned.append((enrollment, index, channel, to, send_at))

    renders = await merge.render_many(jobs)
    for (enrollment, index, channel, to, send_at), job, rendered in zip(
        planned, jobs, renders, strict=True
    ):
        first = enrollment.state == "pending"
        failure = rendered if isinstance(rendered, merge.RenderFailure) else None
        # The step's message; when its render stopped it is written `failed` with the reason
        # (contract §12), unrendered, and the contact's sequence ends there.
        content = job if failure is not None else rendered
        assert not isinstance(content, merge.RenderFailure)
        message = outbox_message(
            settings,
            organization_id=org_id,
            channel=channel,
            contact_id=enrollment.contact_id,
            to=to,
            subject=content.subject,
            body=content.body,
            body_html=content.body_html,
            send_at=None if failure is not None else send_at,
            campaign_id=campaign.id,
            enrollment_id=enrollment.id,
            step_index=index,
        )
        session.add(message)
        if failure is not None:
            fail_unrendered(message, failure.reason)
            if first:
                result.skipped["template_error"] += 1
            _finish(enrollment, "skipped" if first else "stopped", "template_error", now)
            continue
        result.messages += 1
        if first:
            result.first_steps += 1
        enrollment.current_step = index
        enrollment.updated_at = now
        if message.manual:
            # Nothing reports a manual item as sent: the sequence counts it sent when due.
            enrollment.state = "sent"
            enrollment.last_sent_at = max(send_at, now)
            enrollment.next_run_at = None
        else:
            enrollment.state = "scheduled"
            enrollment.next_run_at = max(send_at, now)
    await session.flush()
    return result


def _finish(enrollment: EngageEnrollment, state: str, reason: str | None, now: datetime) -> None:
    enrollment.state = state
    enrollment.reason = reason
    enrollment.next_run_at = None
    enrollment.updated_at = now


async def run_campaign_steps(ctx: WorkerContext) -> int:
    """Job kind: schedule one batch of due steps, then complete finished campaigns."""
    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        enrollments = await sequence_repository.claim_due_steps(session, BATCH)
        by_campaign: dict[uuid.UUID, list[EngageEnrollment]] = {}
        for enrollment in enrollments:
            by_campaign.setdefault(enrollment.campaign_id, []).append(enrollment)
        queued = 0
        for campaign_id, batch in by_campaign.items():
            # FOR SHARE: a PATCH pausing the campaign waits for this transaction (and then
            # holds what it wrote), or this one sees the campaign paused and leaves it alone.
            campaign = await sequence_repository.active_campaign_shared(session, campaign_id)
            if campaign is not None:
                queued += (await schedule(session, ctx.settings, campaign, batch)).messages
        completed = await sequence_repository.complete_finished(session)
        for campaign in completed:  # finished by itself: said as a PATCH's completion is
            emit(session, CampaignCompleted(campaign.organization_id, campaign))
        if queued:
            await wake_worker(session)
    return len(enrollments) + len(completed)
