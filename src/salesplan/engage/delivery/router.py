"""Engage delivery (contract §7 "engage"): send, queue, replies, analytics."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep
from salesplan.engage.delivery import campaign_runs, queue, suppressions
from salesplan.engage.delivery.schemas import (
    AnalyticsOut,
    QueueItemOut,
    QueueStatus,
    ReplyOut,
    SendMessageIn,
    SendMessageOut,
    StartCampaignOut,
    SuppressionOut,
    SuppressionReason,
    SuppressionsIn,
    SuppressionsOut,
)
from salesplan.engage.schemas import CampaignOut
from salesplan.idempotency import run_idempotent
from salesplan.kit.fields import Date
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response, page_response
from salesplan.kit.schemas import ListResponse, QueryText
from salesplan.kit.tools import as_tool

router = APIRouter()

Send = Annotated[RequestContext, require("engage:send", "engage_send")]
QueueRead = Annotated[RequestContext, require("engage:read", "engage_queue")]
SuppressionRead = Annotated[RequestContext, require("engage:read", "engage")]
SuppressionWrite = Annotated[RequestContext, require("engage:write", "engage")]
AnalyticsRead = Annotated[RequestContext, require("engage:read", "engage_analytics")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="Required: 1 to 255 printable characters; retries with the same key and "
        "body replay the first answer.",
    ),
]


def queue_item(message: object) -> dict[str, object]:
    return QueueItemOut.model_validate(message).model_dump(mode="json", by_alias=True)


@router.post(
    "/engage/messages/send",
    operation_id="sendEngageMessage",
    tags=["engage-messages"],
    status_code=202,
    response_model=SendMessageOut,
    responses={
        409: {"description": "Idempotency conflict (payload_mismatch or in_flight)."},
        422: {"description": "Missing contact, no address, or a suppressed address."},
    },
)
async def send_engage_message(
    request: Request,
    body: SendMessageIn,
    ctx: Send,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Queue one message (EMAIL, SLACK, or LINKEDIN as a manual item) for delivery."""

    async def execute(session: AsyncSession) -> tuple[int, dict[str, Any]]:
        settings = request.app.state.settings
        message = await queue.send_message(session, ctx, settings, body)
        return 202, {"message": queue_item(message)}

    return await run_idempotent(
        request,
        ctx,
        operation="sendEngageMessage",
        key=idempotency_key,
        path_params=None,
        execute=execute,
    )


@router.post(
    "/engage/campaigns/{campaignId}/start",
    operation_id="startEngageCampaign",
    tags=["engage-campaigns"],
    status_code=200,
    response_model=StartCampaignOut,
    responses={
        409: {
            "description": "The campaign was already started (`details.reason` "
            "`already_started`; resume a paused one with a PATCH to `active`), or an "
            "idempotency conflict (`payload_mismatch`, `in_flight`)."
        },
        422: {"description": "The campaign is completed (`details.reason` `campaign_completed`)."},
    },
)
async def start_engage_campaign(
    request: Request,
    campaignId: uuid.UUID,
    ctx: Send,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Activate a campaign and schedule each enrolled contact's first step; later steps
    follow their delayMinutes after the previous one was sent, and a reply stops a contact's
    sequence. `started` counts the contacts whose first step was scheduled; `skipped` those
    left out (no e-mail address for an EMAIL step, a suppressed address)."""

    async def execute(session: AsyncSession) -> tuple[int, dict[str, Any]]:
        settings = request.app.state.settings
        campaign, started, skipped = await campaign_runs.start_campaign(
            session, ctx, settings, campaignId
        )
        body = {
            "campaign": CampaignOut.model_validate(campaign).model_dump(mode="json", by_alias=True),
            "started": started,
            "skipped": skipped,
        }
        return 200, body

    return await run_idempotent(
        request,
        ctx,
        operation="startEngageCampaign",
        key=idempotency_key,
        path_params={"campaignId": str(campaignId)},
        execute=execute,
    )


QueueParams = Annotated[ListParams, list_params(("createdAt", "updatedAt"))]


@router.get(
    "/engage/queue",
    operation_id="listEngageQueue",
    tags=["engage-queue"],
    response_model=ListResponse[QueueItemOut],
)
@as_tool()
async def list_engage_queue(
    ctx: QueueRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: QueueParams,
    status: Annotated[QueueStatus | None, Query()] = None,
    campaign_id: Annotated[uuid.UUID | None, Query(alias="campaignId")] = None,
    contact_id: Annotated[uuid.UUID | None, Query(alias="contactId")] = None,
) -> Response:
    """List outbound messages with their per-recipient delivery and engagement state."""
    items, meta = await queue.list_queue(
        session,
        ctx,
        params,
        codec,
        status=status,
        campaign_id=campaign_id,
        contact_id=contact_id,
    )
    return page_response(QueueItemOut, items, meta)


@router.get(
    "/engage/queue/{messageId}",
    operation_id="getEngageQueueItem",
    tags=["engage-queue"],
    response_model=QueueItemOut,
)
@as_tool()
async def get_engage_queue_item(
    messageId: uuid.UUID, ctx: QueueRead, session: SessionDep
) -> Response:
    """Read one queue item."""
    return json_response(
        QueueItemOut.model_validate(await queue.get_queue_item(session, ctx, messageId))
    )


ReplyParams = Annotated[ListParams, list_params(("receivedAt",), default="receivedAt")]
IncludeHtml = Annotated[bool, Query(alias="includeHtml")]


def reply_body(reply: object, include_html: bool) -> dict[str, object]:
    data = ReplyOut.model_validate(reply).model_dump(mode="json", by_alias=True)
    if not include_html:
        data.pop("html", None)
    return data


@router.get(
    "/engage/replies",
    operation_id="listEngageReplies",
    tags=["engage-replies"],
    response_model=ListResponse[ReplyOut],
    response_model_exclude_unset=True,
)
@as_tool()
async def list_engage_replies(
    ctx: QueueRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: ReplyParams,
    message_id: Annotated[uuid.UUID | None, Query(alias="messageId")] = None,
    contact_id: Annotated[uuid.UUID | None, Query(alias="contactId")] = None,
    campaign_id: Annotated[uuid.UUID | None, Query(alias="campaignId")] = None,
    include_html: IncludeHtml = False,
) -> Response:
    """List inbound replies; `html` (sanitized) only with includeHtml=true."""
    items, meta = await queue.list_replies(
        session,
        ctx,
        params,
        codec,
        message_id=message_id,
        contact_id=contact_id,
        campaign_id=campaign_id,
    )
    return json_response({"data": [reply_body(r, include_html) for r in items], "pagination": meta})


@router.get(
    "/engage/replies/{replyId}",
    operation_id="getEngageReply",
    tags=["engage-replies"],
    response_model=ReplyOut,
)
@as_tool()
async def get_engage_reply(
    replyId: uuid.UUID, ctx: QueueRead, session: SessionDep, include_html: IncludeHtml = False
) -> Response:
    """Read one reply; `html` (sanitized) only with includeHtml=true."""
    return json_response(reply_body(await queue.get_reply(session, ctx, replyId), include_html))


@router.get(
    "/engage/analytics",
    operation_id="getEngageAnalytics",
    tags=["engage-queue"],
    response_model=AnalyticsOut,
)
@as_tool()
async def get_engage_analytics(
    ctx: AnalyticsRead,
    session: SessionDep,
    start: Annotated[
        Date | None,
        Query(alias="from", description="Not after `to`, at most 366 days before it (else 400)."),
    ] = None,
    end: Annotated[Date | None, Query(alias="to")] = None,
    campaign_id: Annotated[uuid.UUID | None, Query(alias="campaignId")] = None,
) -> Response:
    """Sent, delivered, opened, clicked, replied and bounced messages per day."""
    return json_response(
        await queue.analytics(session, ctx, start=start, end=end, campaign_id=campaign_id)
    )


SuppressionParams = Annotated[ListParams, list_params(("createdAt", "address"))]


@router.get(
    "/engage/suppressions",
    operation_id="listEngageSuppressions",
    tags=["engage-suppressions"],
    response_model=ListResponse[SuppressionOut],
)
@as_tool()
async def list_engage_suppressions(
    ctx: SuppressionRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: SuppressionParams,
    address: Annotated[
        QueryText | None,
        Query(
            description="Only this address, compared as parsed (`Ada <ADA@x.example>` is "
            "ada@x.example)."
        ),
    ] = None,
    reason: Annotated[SuppressionReason | None, Query()] = None,
) -> Response:
    """List the organization's suppressed addresses (unsubscribed, hard bounces, complaints),
    which are never written to; use `limit`/`cursor` for long lists."""
    items, meta = await suppressions.list_suppressions(
        session, ctx, params, codec, address=address, reason=reason
    )
    return page_response(SuppressionOut, items, meta)


@router.post(
    "/engage/suppressions",
    operation_id="bulkCreateEngageSuppressions",
    tags=["engage-suppressions"],
    status_code=207,
    response_model=SuppressionsOut,
    responses={
        403: {
            "description": "Not an admin of the organization (`details.reason` `admin_required`)."
        },
    },
)
async def bulk_create_engage_suppressions(
    body: SuppressionsIn, ctx: SuppressionWrite, session: SessionDep
) -> Response:
    """Import opt-outs from another system (admins only): up to 1000 addresses, each
    suppressed through the same path as an unsubscribe. One result per address, in order:
    201 suppressed now, 200 already suppressed (its first reason stays), 400 not an address."""
    result = await suppressions.import_suppressions(session, ctx, body.addresses, body.reason)
    return json_response(result, 207)


@router.delete(
    "/engage/suppressions/{address}",
    operation_id="deleteEngageSuppression",
    tags=["engage-suppressions"],
    status_code=204,
    responses={
        403: {
            "description": "Not an admin of the organization (`details.reason` `admin_required`)."
        },
        404: {"description": "The address is not suppressed in this organization."},
    },
)
async def delete_engage_suppression(
    address: QueryText, ctx: SuppressionWrite, session: SessionDep
) -> Response:
    """Lift a suppression (admins only): the address may be written to again. The address is
    compared as parsed; URL-encode it in the path."""
    await suppressions.delete_suppression(session, ctx, address)
    return Response(status_code=204)
