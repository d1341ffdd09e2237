"""Feed routes (contract §7 "feed"; scope `feed:read`, group `feed`)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db import read_only
from salesplan.db_dependencies import SessionDep
from salesplan.feed import descriptions as text
from salesplan.feed import service
from salesplan.feed.schemas import AnalyticsOut, AttentionItem, DateText, FeedMessageOut, InboxItem
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ListParams, page_request
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import INT32_MAX, ListResponse, QueryText
from salesplan.kit.tools import as_tool

router = APIRouter(tags=["feed"])


Read = Annotated[RequestContext, require("feed:read", "feed")]
UserRead = Annotated[RequestContext, require("feed:read", "feed", user_token=True)]


async def inbox_params(
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE_SIZE)] = None,
    cursor: Annotated[
        QueryText | None,
        Query(description="Opaque: a `nextCursor` this inbox answered; not with `page`."),
    ] = None,
    page: Annotated[int | None, Query(ge=1, le=INT32_MAX)] = None,
    page_size: Annotated[int | None, Query(alias="pageSize", ge=1, le=MAX_PAGE_SIZE)] = None,
) -> ListParams:
    """Cursor mode (`limit`, `cursor`; contract §11 "Feed shapes") unless `page` or `pageSize`
    asks for page mode (§4, `kit.pagination.page_request`: beside `limit` or a cursor, the
    declared `page=1` and `pageSize=50` are as if absent; another beside a cursor is a 400)."""
    cursor, page, page_size = page_request(limit, cursor, page, page_size)
    page_mode = cursor is None and (page is not None or page_size is not None)
    return ListParams(
        mode="page" if page_mode else "cursor",
        page=page or 1,
        page_size=(page_size if page_mode else limit) or limit or page_size or DEFAULT_PAGE_SIZE,
        cursor=cursor or None,
        sort_by="lastActivityAt",
        order="desc",
        search=None,
    )


InboxParams = Annotated[ListParams, Depends(inbox_params)]
MessageParams = Annotated[ListParams, list_params(("occurredAt",), default="occurredAt")]
AttentionParams = Annotated[ListParams, list_params(("since",), default="since")]


@router.get(
    "/accounts/{accountId}/inbox",
    operation_id="getAccountInbox",
    summary="Read an account's inbox",
    description=text.GET_ACCOUNT_INBOX,
    response_model=ListResponse[InboxItem],
)
@as_tool(docs=text.GET_ACCOUNT_INBOX_ARGS)
@read_only
async def get_account_inbox(
    accountId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: InboxParams,
    type: Annotated[Literal["email", "slack", "calendar"] | None, Query()] = None,
) -> Response:
    """The account's conversations across e-mail, Slack and calendar, newest activity first
    that has happened (cursor pagination: `limit`, `cursor`). A thread belongs to the account
    when a participant is one of its contacts, or of its domain unless that is one of the
    organization's own; a meeting's thread only for who may read the event (contract §12)."""
    items, meta = await service.account_inbox(session, ctx, accountId, params, codec, kind=type)
    return json_response(ListResponse(data=items, pagination=meta))


def _thread_reader(kind: str | None) -> Callable[..., Awaitable[Response]]:
    """The route reading one thread of the account's inbox (of `kind` only, when given)."""

    async def read_thread(
        accountId: uuid.UUID,
        threadId: uuid.UUID,
        ctx: Read,
        session: SessionDep,
        codec: CursorCodecDep,
        params: MessageParams,
    ) -> Response:
        items, meta = await service.thread_messages(
            session, ctx, accountId, threadId, params, codec, kind=kind
        )
        return json_response(ListResponse(data=items, pagination=meta))

    return read_thread


# The messages of one inbox thread (an `id` from getAccountInbox), oldest first.
get_account_inbox_thread_messages = router.get(
    "/accounts/{accountId}/inbox/threads/{threadId}/messages",
    operation_id="getAccountInboxThreadMessages",
    name="get_account_inbox_thread_messages",
    summary="Read an inbox thread",
    description=text.GET_ACCOUNT_INBOX_THREAD_MESSAGES,
    response_model=ListResponse[FeedMessageOut],
)(as_tool(docs=text.THREAD_ARGS)(read_only(_thread_reader(None))))

# The messages of one Slack thread of the account's inbox, oldest first.
get_account_inbox_slack_thread = router.get(
    "/accounts/{accountId}/inbox/slack-threads/{threadId}",
    operation_id="getAccountInboxSlackThread",
    name="get_account_inbox_slack_thread",
    summary="Read a Slack thread",
    description=text.GET_ACCOUNT_INBOX_SLACK_THREAD,
    response_model=ListResponse[FeedMessageOut],
)(as_tool(docs=text.THREAD_ARGS)(read_only(_thread_reader("slack"))))


@router.get(
    "/feed/analytics",
    operation_id="getCommunicationAnalytics",
    summary="Communication analytics",
    description=text.GET_COMMUNICATION_ANALYTICS,
    response_model=AnalyticsOut,
)
@as_tool(docs=text.GET_COMMUNICATION_ANALYTICS_ARGS)
@read_only
async def get_communication_analytics(
    ctx: UserRead,
    session: SessionDep,
    from_: Annotated[DateText | None, Query(alias="from")] = None,
    to: Annotated[DateText | None, Query()] = None,
    granularity: Annotated[Literal["day", "week"], Query()] = "day",
) -> Response:
    """Sent, received, replies, meetings and Slack messages by day or week over [`from`, `to`]
    (dates, default the last 30 days), with the reply rate and the median first-response time
    (user-backed tokens only)."""
    return json_response(
        await service.analytics(
            session,
            ctx,
            start=date.fromisoformat(from_) if from_ else None,
            end=date.fromisoformat(to) if to else None,
            granularity=granularity,
        )
    )


@router.get(
    "/feed/needs-attention",
    operation_id="listNeedsAttention",
    summary="What needs attention",
    description=text.LIST_NEEDS_ATTENTION,
    response_model=ListResponse[AttentionItem],
)
@as_tool(brief=text.LIST_NEEDS_ATTENTION_BRIEF)
@read_only
async def list_needs_attention(
    ctx: UserRead, session: SessionDep, codec: CursorCodecDep, params: AttentionParams
) -> Response:
    """What needs the caller: inbound messages unanswered for over 24 h, their overdue plan
    tasks, meetings with open action items; each says why and links the record."""
    items, meta = await service.needs_attention(session, ctx, params, codec)
    return json_response(ListResponse(data=items, pagination=meta))
