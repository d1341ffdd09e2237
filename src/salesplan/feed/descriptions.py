"""What the feed operations do, in words for an agent: the route declarations' `description`
(the OpenAPI document and the MCP tool derived from the route share it), and the descriptions of
tool arguments that the parameters do not carry."""

from __future__ import annotations

ACCOUNT_ID = "Id of the account (an `id` from listAccounts)."
THREAD_ID = "Id of the inbox thread (an `id` from getAccountInbox)."
MESSAGE_SHAPE = (
    '`{"data": [{id, threadId, type, direction: "inbound"|"outbound", author: {email, name}, '
    'subject, text, occurredAt, channel, ts}], "pagination"}`, oldest first'
)

GET_ACCOUNT_INBOX = """
The account's conversations across e-mail, Slack and calendar, newest activity first:
`{"data": [{id, type: "email"|"slack"|"calendar", subject, participants: [{email, name}],
snippet, messageCount, lastActivityAt}], "pagination": {hasNextPage, nextCursor, pageSize}}`.
Newest activity is the last that has happened: a meeting still to come sorts last, with
`lastActivityAt` null. A thread belongs to the account when a participant is one of its contacts
(whatever the domain) or of its domain, unless that domain is one of the organization's own.
A meeting's thread is shown only to who may read the event: its owner, admins and consultants
(not other members, not app tokens). Page with `limit` and `cursor` (the
`nextCursor` of the previous page); filter with `type`. Read a thread's messages with
getAccountInboxThreadMessages (or getAccountInboxSlackThread for Slack) using the item's `id`.
"""
GET_ACCOUNT_INBOX_ARGS = {
    "accountId": ACCOUNT_ID,
    "type": "Only the threads of this kind: `email`, `slack` or `calendar`.",
    "limit": "Threads per page (1..200, default 50).",
    "cursor": "Opaque `pagination.nextCursor` of the previous call.",
    "page": "Page number, for page mode with totals (default: cursor mode).",
    "pageSize": "Threads per page in page mode (1..200).",
}

GET_ACCOUNT_INBOX_THREAD_MESSAGES = f"""
The messages of one thread of the account's inbox (an `id` from getAccountInbox, any type):
{MESSAGE_SHAPE}. `not_found` when the thread is not one of this account's.
"""
THREAD_ARGS = {"accountId": ACCOUNT_ID, "threadId": THREAD_ID}

GET_ACCOUNT_INBOX_SLACK_THREAD = f"""
The messages of one Slack thread of the account's inbox (a `type: "slack"` item of
getAccountInbox): {MESSAGE_SHAPE}; `channel` and `ts` are Slack's. `not_found` when the thread is
not a Slack thread of this account.
"""

GET_COMMUNICATION_ANALYTICS = """
Communication counts by day or week over [`from`, `to`] (dates `YYYY-MM-DD`, default the last 30
days): `{"granularity", "from", "to", "buckets": [{start, sent, received, replies, meetings,
slackMessages}], "totals": {sent, received, replies, meetings, slackMessages, replyRate,
medianFirstResponseSeconds}}`. E-mail and Slack are the organization's; meetings are the user's
own. `replyRate` = e-mails sent in the range that were answered / e-mails sent (null when none
was sent); `medianFirstResponseSeconds` = median time to the first reply of those. Needs a
user-backed token.
"""
GET_COMMUNICATION_ANALYTICS_ARGS = {
    "from": "First day (YYYY-MM-DD), default 29 days before `to`.",
    "to": "Last day (YYYY-MM-DD), default today (UTC).",
    "granularity": "Bucket size: `day`, or `week` (ISO weeks, from Monday).",
}

LIST_NEEDS_ATTENTION = """
What needs the user, oldest first: `{"data": [{kind: "unanswered_message"|"overdue_task"|
"open_action_items", reason, entityType: "emailThread"|"slackThread"|"planTask"|
"calendarEvent", entityId, since}], "pagination"}` — inbound e-mail and Slack threads left
unanswered for over 24 hours, the user's overdue plan tasks (past their target date, not
completed), and the user's past meetings with open action items. Needs a user-backed token.
"""

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
LIST_NEEDS_ATTENTION_BRIEF = (
    "What needs the user, oldest first: inbound threads unanswered for over 24 hours, overdue "
    "plan tasks, and past meetings with open action items."
)
