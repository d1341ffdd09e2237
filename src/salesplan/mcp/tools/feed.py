"""getAccountInbox, getAccountInboxThreadMessages, getAccountInboxSlackThread,
getCommunicationAnalytics, listNeedsAttention: the spec's feed tools, over the same services as
the REST routes (the dashboard reads need a user-backed token)."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any, Literal

from pydantic import Field

from salesplan.feed import service
from salesplan.feed.schemas import DateText
from salesplan.kit.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ListParams
from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, mcp_tool

ACCOUNT_ID = "Id of the account (an `id` from listAccounts)."
THREAD_ID = "Id of the inbox thread (an `id` from getAccountInbox)."
MESSAGE_SHAPE = (
    '`{"data": [{id, threadId, type, direction: "inbound"|"outbound", author: {email, name}, '
    'subject, text, occurredAt, channel, ts}], "pagination"}`, oldest first'
)


class GetAccountInboxArgs(ToolArgs):
    account_id: uuid.UUID = Field(description=ACCOUNT_ID)
    type: Literal["email", "slack", "calendar"] | None = Field(
        default=None, description="Only the threads of this kind."
    )
    limit: int = Field(
        default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Threads per page."
    )
    cursor: str | None = Field(
        default=None, description="Opaque `pagination.nextCursor` of the previous call."
    )

    def list_params(self) -> ListParams:
        return ListParams(
            mode="cursor",
            page=1,
            page_size=self.limit,
            cursor=self.cursor or None,
            sort_by="lastActivityAt",
            order="desc",
            search=None,
        )


class ThreadArgs(ListArgs):
    sortable = ("occurredAt",)
    default_sort = "occurredAt"
    docs = {"search": "Not used by thread reads."}

    account_id: uuid.UUID = Field(description=ACCOUNT_ID)
    thread_id: uuid.UUID = Field(description=THREAD_ID)


class AnalyticsArgs(ToolArgs):
    from_: DateText | None = Field(
        default=None,
        alias="from",
        description="First day (YYYY-MM-DD), default 29 days before `to`.",
    )
    to: DateText | None = Field(default=None, description="Last day (YYYY-MM-DD), default today.")
    granularity: Literal["day", "week"] = Field(
        default="day", description="Bucket size: `day`, or `week` (ISO weeks, from Monday)."
    )


class NeedsAttentionArgs(ListArgs):
    sortable = ("since",)
    default_sort = "since"
    docs = {"search": "Not used."}


@mcp_tool(
    "getAccountInbox",
    scope="feed:read",
    group="feed",
    args=GetAccountInboxArgs,
    title="Read an account's inbox",
    description="""
The account's conversations across e-mail, Slack and calendar, newest activity first:
`{"data": [{id, type: "email"|"slack"|"calendar", subject, participants: [{email, name}],
snippet, messageCount, lastActivityAt}], "pagination": {hasNextPage, nextCursor, pageSize}}`.
A thread belongs to the account when a participant is one of its contacts or of its domain.
Page with `limit` and `cursor`; read a thread's messages with getAccountInboxThreadMessages
(or getAccountInboxSlackThread for Slack) using the item's `id`.
""",
)
async def get_account_inbox(call: ToolCall, args: GetAccountInboxArgs) -> Any:
    items, meta = await service.account_inbox(
        call.session, call.ctx, args.account_id, args.list_params(), call.codec, kind=args.type
    )
    return ListResponse(data=items, pagination=meta)


@mcp_tool(
    "getAccountInboxThreadMessages",
    scope="feed:read",
    group="feed",
    args=ThreadArgs,
    title="Read an inbox thread",
    description=f"The messages of one thread of the account's inbox: {MESSAGE_SHAPE}.",
)
async def get_account_inbox_thread_messages(call: ToolCall, args: ThreadArgs) -> Any:
    items, meta = await service.thread_messages(
        call.session, call.ctx, args.account_id, args.thread_id, args.list_params(), call.codec
    )
    return ListResponse(data=items, pagination=meta)


@mcp_tool(
    "getAccountInboxSlackThread",
    scope="feed:read",
    group="feed",
    args=ThreadArgs,
    title="Read a Slack thread",
    description=f"""
The messages of one Slack thread of the account's inbox (a `type: "slack"` item of
getAccountInbox): {MESSAGE_SHAPE}; `channel` and `ts` are Slack's.
""",
)
async def get_account_inbox_slack_thread(call: ToolCall, args: ThreadArgs) -> Any:
    items, meta = await service.thread_messages(
        call.session,
        call.ctx,
        args.account_id,
        args.thread_id,
        args.list_params(),
        call.codec,
        kind="slack",
    )
    return ListResponse(data=items, pagination=meta)


@mcp_tool(
    "getCommunicationAnalytics",
    scope="feed:read",
    group="feed",
    args=AnalyticsArgs,
    user_token=True,
    title="Communication analytics",
    description="""
Counts by day or week over [`from`, `to`] (dates, default the last 30 days): `{"granularity",
"from", "to", "buckets": [{start, sent, received, replies, meetings, slackMessages}], "totals":
{sent, received, replies, meetings, slackMessages, replyRate, medianFirstResponseSeconds}}`.
E-mail and Slack are the organization's; meetings are the user's own. `replyRate` = e-mails
sent in the range that got a reply / e-mails sent (null when none was sent).
""",
)
async def get_communication_analytics(call: ToolCall, args: AnalyticsArgs) -> Any:
    return await service.analytics(
        call.session,
        call.ctx,
        start=date.fromisoformat(args.from_) if args.from_ else None,
        end=date.fromisoformat(args.to) if args.to else None,
        granularity=args.granularity,
    )


@mcp_tool(
    "listNeedsAttention",
    scope="feed:read",
    group="feed",
    args=NeedsAttentionArgs,
    user_token=True,
    title="What needs attention",
    description="""
What needs the user, oldest first: `{"data": [{kind: "unanswered_message"|"overdue_task"|
"open_action_items", reason, entityType: "emailThread"|"slackThread"|"planTask"|
"calendarEvent", entityId, since}], "pagination"}` — inbound messages unanswered for over 24 h,
the user's overdue plan tasks, and the user's past meetings with open action items.
""",
)
async def list_needs_attention(call: ToolCall, args: NeedsAttentionArgs) -> Any:
    items, meta = await service.needs_attention(
        call.session, call.ctx, args.list_params(), call.codec
    )
    return ListResponse(data=items, pagination=meta)
