"""Engage campaigns: their flow of steps, status transitions, bulk create, enrollments and the
per-step counts. Starting, sending and the steps' schedule are the delivery side's
(`engage.delivery`). The statements are `engage.repository`'s."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage.delivery import sequence_repository
from salesplan.engage.delivery.windows import CONTACT
from salesplan.engage.events import CampaignCompleted
from salesplan.engage.lists import check_contacts
from salesplan.engage.repository import (
    CampaignRepository,
    JobRepository,
    ListRepository,
    TemplateRepository,
    audience_of_contacts,
)
from salesplan.engage.schemas import (
    CampaignIn,
    CampaignOut,
    CampaignPatch,
    EnrollIn,
    FlowIn,
    SendWindowIn,
)
from salesplan.errors import Unprocessable, validation_errors
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.zones import zone
from salesplan.models.engage import SKIP_REASONS, EngageCampaign, EngageEnrollmentJob, EngageList
from salesplan.worker.context import wake_worker

# PATCH may move a campaign only along these edges. Only startEngageCampaign schedules steps: a
# draft activated by PATCH sends nothing until it is started. Pausing a started campaign holds
# its scheduled messages, resuming releases them, completing it cancels them.
TRANSITIONS: dict[str, set[str]] = {
    "draft": {"active"},
    "active": {"paused", "completed"},
    "paused": {"active", "completed"},
    "completed": set(),
}


async def list_campaigns(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None,
) -> tuple[list[EngageCampaign], PaginationMeta]:
    return await CampaignRepository(session, ctx).page(params, codec, status=status)


async def get_campaign(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID
) -> EngageCampaign:
    return await CampaignRepository(session, ctx).get(campaign_id)


def _flow_problems(
    flow: FlowIn, templates: dict[uuid.UUID, str]
) -> tuple[str, dict[str, object]] | None:
    """The first step whose template is missing (or archived) or of another channel."""
    for index, step in enumerate(flow.steps):
        field = f"flow.steps[{index}].templateId"
        channel = templates.get(step.template_id)
        if channel is None:
            return (
                f"Template {step.template_id} does not exist in the organization.",
                {"field": field, "id": str(step.template_id)},
            )
        if channel != step.channel:
            return (
                f"Step {index} is {step.channel} but its template is {channel}.",
                {"field": field, "id": str(step.template_id), "reason": "channel_mismatch"},
            )
    return None


def _window_problem(window: SendWindowIn | None) -> tuple[str, dict[str, object]] | None:
    """A send window's semantic errors (contract §14, a 422): an unknown time zone, an end
    equal to the start (a window crossing midnight, end before start, is fine)."""
    if window is None:
        return None
    if window.time_zone != CONTACT and zone(window.time_zone) is None:
        return (
            f'{window.time_zone!r} is neither "contact" nor an IANA time zone name.',
            {"field": "sendWindow.timeZone", "reason": "unknown_time_zone"},
        )
    if window.fallback_time_zone is not None and zone(window.fallback_time_zone) is None:
        return (
            f"{window.fallback_time_zone!r} is not an IANA time zone name.",
            {"field": "sendWindow.fallbackTimeZone", "reason": "unknown_time_zone"},
        )
    if window.start == window.end:
        return (
            "A send window's end must differ from its start.",
            {"field": "sendWindow.end", "reason": "empty_window"},
        )
    return None


def _check_window(window: SendWindowIn | None) -> None:
    problem = _window_problem(window)
    if problem:
        raise Unprocessable(problem[0], details=problem[1])


def _flow_wire(flow: FlowIn) -> dict[str, object]:
    return flow.model_dump(mode="json", by_alias=True)


async def _check_flow(session: AsyncSession, ctx: RequestContext, flow: FlowIn) -> None:
    templates = TemplateRepository(session, ctx)
    problem = _flow_problems(
        flow, await templates.live_channels({s.template_id for s in flow.steps})
    )
    if problem:
        raise Unprocessable(problem[0], details=problem[1])


def _new_campaign(data: CampaignIn) -> EngageCampaign:
    return EngageCampaign(
        name=data.name,
        description=data.description,
        status="draft",
        flow=_flow_wire(data.flow),
        send_window=data.send_window.wire() if data.send_window is not None else None,
    )


async def create_campaign(
    session: AsyncSession, ctx: RequestContext, data: CampaignIn
) -> EngageCampaign:
    await _check_flow(session, ctx, data.flow)
    _check_window(data.send_window)
    return await CampaignRepository(session, ctx).insert(_new_campaign(data))


async def update_campaign(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID, data: CampaignPatch
) -> EngageCampaign:
    sent = data.sent()
    reject_nulls(sent, ("name", "flow", "status"))
    campaigns = CampaignRepository(session, ctx)
    campaign = await campaigns.get(campaign_id)
    if "flow" in sent:
        if campaign.status != "draft":
            raise Unprocessable(
                "The flow of a campaign can be changed only while it is a draft.",
                details={"field": "flow", "status": campaign.status},
            )
        assert data.flow is not None
        await _check_flow(session, ctx, data.flow)
        sent["flow"] = _flow_wire(data.flow)
    if "send_window" in sent:
        # Any time: it applies to the steps scheduled from now on (null removes it).
        _check_window(data.send_window)
        sent["send_window"] = data.send_window.wire() if data.send_window is not None else None
    new_status = sent.pop("status", None)
    if new_status is not None and new_status != campaign.status:
        if new_status not in TRANSITIONS[campaign.status]:
            raise Unprocessable(
                f"A {campaign.status} campaign cannot become {new_status}.",
                details={"field": "status", "from": campaign.status, "to": new_status},
            )
        sent["status"] = new_status
    else:
        new_status = None
    # The campaign's row is written (and locked) first: the campaign job reads it FOR SHARE
    # while it schedules steps, so the messages below include any it was writing meanwhile.
    await campaigns.update(campaign, sent | {"updated_at": utcnow()})
    if new_status is not None and campaign.started_at is not None:
        # A started campaign's outbox rows follow it (issue 13, delivery/sequence_repository).
        if new_status == "paused":
            await sequence_repository.hold(session, campaign.id)
        elif new_status == "active":
            await sequence_repository.release(session, campaign.id)
        elif new_status == "completed":
            await sequence_repository.stop_campaign(session, campaign.id)
    if new_status == "completed":
        emit(session, CampaignCompleted(ctx.organization_id, campaign))
    return campaign


def _row_failure(
    index: int, status: int, code: str, message: str, details: object
) -> dict[str, object]:
    error = {"code": code, "message": message, "details": details}
    return {"index": index, "status": status, "error": error}


def _parse_row(index: int, raw: object) -> CampaignIn | dict[str, object]:
    """The row as a campaign, or its 400 result."""
    try:
        if not isinstance(raw, dict):
            raise ValueError
        return CampaignIn.model_validate(raw)
    except (ValidationError, ValueError) as exc:
        errors: list[dict[str, Any]] = (
            validation_errors(exc.errors())
            if isinstance(exc, ValidationError)
            else [{"location": [], "message": "Each campaign must be an object."}]
        )
        for err in errors:
            err["location"] = ["body", "campaigns", index, *err["location"]]
        return _row_failure(
            index, 400, "validation_error", "The campaign is not valid.", {"errors": errors}
        )


async def bulk_create_campaigns(
    session: AsyncSession, ctx: RequestContext, rows: Sequence[object]
) -> dict[str, object]:
    """Create the valid rows, report every row: one query for every referenced template, one
    INSERT for every valid campaign."""
    results: list[dict[str, object] | None] = [None] * len(rows)
    valid: list[tuple[int, CampaignIn]] = []
    for index, raw in enumerate(rows):
        parsed = _parse_row(index, raw)
        if isinstance(parsed, CampaignIn):
            valid.append((index, parsed))
        else:
            results[index] = parsed
    ids = {s.template_id for _, c in valid for s in c.flow.steps}
    channels = await TemplateRepository(session, ctx).live_channels(ids)
    now = utcnow()
    to_insert: list[tuple[int, EngageCampaign]] = []
    for index, data in valid:
        problem = _flow_problems(data.flow, channels) or _window_problem(data.send_window)
        if problem:
            results[index] = _row_failure(index, 422, "unprocessable", problem[0], problem[1])
            continue
        campaign = _new_campaign(data)
        campaign.id = uuid.uuid4()
        campaign.organization_id = ctx.organization_id
        campaign.created_at = campaign.updated_at = now
        to_insert.append((index, campaign))
    await CampaignRepository(session, ctx).insert_many([c for _, c in to_insert])
    for index, campaign in to_insert:
        results[index] = {
            "index": index,
            "status": 201,
            "data": CampaignOut.model_validate(campaign).model_dump(mode="json", by_alias=True),
        }
    created = len(to_insert)
    return {"results": results, "created": created, "failed": len(rows) - created}


# --- enrollments ---------------------------------------------------------------------------


async def enroll(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID, data: EnrollIn
) -> EngageEnrollmentJob:
    """Queue an enrollment job (the worker runs it in batches); answer at once."""
    campaign = await get_campaign(session, ctx, campaign_id)
    if campaign.status == "completed":
        raise Unprocessable(
            "A completed campaign takes no enrollments.", details={"status": campaign.status}
        )
    ids: list[str] | None = None
    if data.list_id is not None:
        lst: EngageList = await referenced(session, EngageList, ctx, data.list_id, "listId")
        total = await ListRepository(session, ctx).audience_size(lst)
    else:
        wanted = set(data.contact_ids or [])
        await check_contacts(session, ctx, wanted, "contactIds")
        ids = sorted(str(c) for c in wanted)
        total = await audience_of_contacts(session, ctx, sorted(wanted))
    job = EngageEnrollmentJob(
        campaign_id=campaign.id,
        list_id=data.list_id,
        contact_ids=ids,
        status="queued",
        total=total,
        skipped_reasons={reason: 0 for reason in SKIP_REASONS},
        errors=[],
    )
    await JobRepository(session, ctx).insert(job)
    await wake_worker(session)
    return job


async def get_job(
    session: AsyncSession, ctx: RequestContext, job_id: uuid.UUID
) -> EngageEnrollmentJob:
    return await JobRepository(session, ctx).get(job_id)


async def campaign_status(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID
) -> dict[str, object]:
    """Counts per step and state, in one GROUP BY."""
    campaigns = CampaignRepository(session, ctx)
    campaign = await campaigns.get(campaign_id)
    by_step: dict[int, dict[str, int]] = {}
    states: dict[str, int] = {}
    for step, state, count in await campaigns.state_counts(campaign):
        by_step.setdefault(step, {})[state] = count
        states[state] = states.get(state, 0) + count
    steps = [
        {
            "index": index,
            "channel": step["channel"],
            "template_id": step["templateId"],
            "delay_minutes": step["delayMinutes"],
            "states": by_step.get(index, {}),
        }
        for index, step in enumerate(campaign.flow.get("steps", []))
    ]
    return {
        "campaign_id": campaign.id,
        "status": campaign.status,
        "enrolled": sum(states.values()),
        "states": states,
        "steps": steps,
    }
