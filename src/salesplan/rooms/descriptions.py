"""What the room operations do, in words for an agent (the OpenAPI descriptions, and the MCP
tools' when they are exposed)."""

from __future__ import annotations

CREATE_PLAN_SHARE = """
Share a plan with someone on the buyer's side: a contact of the plan's account, named by
`contactId`, or by `email` (an address on the account's domain; its contact is created when
the account has none). `role` is `viewer` (reads the plan) or `collaborator` (also ticks buyer
tasks, comments, and invites colleagues when `allowInvites`). Answers 201 with the share and
its `url` — shown in this answer only (the link's token is stored only as a hash). The buyer
opens the link and signs in with a code e-mailed to the share's address. A personal (USER) plan
cannot be shared (422).
"""

LIST_PLAN_SHARES = """
List a plan's shares: `{"data": [{id, planId, contactId, email, role, status
(active|revoked|expired), allowInvites, invitedByShareId, expiresAt, lastViewedAt,
createdAt}], "pagination"}`. Shares made by buyers inviting colleagues carry
`invitedByShareId`. Links are never listed.
"""

REVOKE_PLAN_SHARE = """
Revoke a share at once: its links answer 410 and its buyer's room sessions end on their next
request. Revoking a revoked share answers 204 again.
"""

SEND_PLAN_SHARE = """
E-mail the share's buyer a link to the room (a new link of the same share) through the Engage
outbox: the sender's caps, pauses, DKIM and the suppression list apply (a suppressed address is
a 422). Answers 202 with the queued message (`{"message": queue item}`; the link in its body is
shown as a placeholder, only the e-mail carries it).
"""

GET_PLAN_ROOM = """
Read the plan's room settings: `{hiddenMilestoneIds, hiddenGoalIds, hiddenTaskIds,
welcomeMessage}`. A hidden item, and every task and goal of a hidden milestone, never reaches a
buyer.
"""

UPDATE_PLAN_ROOM = """
Replace the plan's room settings (what is left out becomes empty). Every id must be one of the
plan's milestones, goals or tasks (422 naming the field otherwise).
"""

LIST_PLAN_TASK_COMMENTS = """
List the comments on a plan's task, oldest first: `{id, taskId, body, author: {type:
user|contact, id, name}, internal, createdAt}`, those the buyer wrote in the room included.
`internal` comments are seen only on this side.
"""

CREATE_PLAN_TASK_COMMENT = """
Comment on a plan's task as the caller (plain text, at most 4,000 characters). With `internal:
true` the comment stays on the seller's side; otherwise the buyer sees it in the plan's room
(when the task is not hidden).
"""

LIST_PLAN_ACTIVITY = """
What buyers did in the plan's room, oldest first: `{"data": [{id, type, shareId, contactId,
taskId, createdAt}], "pagination"}`; `type` is `viewed` (a signed-in buyer opened the room: at
most one per share per 30 minutes), `task_completed`, `task_reopened`, `commented` (`taskId`
says where) or `invited` (a colleague was invited). Cursor mode with `limit`/`cursor`;
`order=desc` for the newest first.
"""

GET_PLAN_ENGAGEMENT = """
How engaged each buyer of the plan is: `{"data": [{contactId, name, views, lastViewedAt,
tasksCompleted, comments, score}]}`, one per contact the plan was shared with, most engaged
first. `views`, `tasksCompleted` and `comments` count all time; `score` is 0 to 5: one point each
for a view in the last 14 days, a second such view on another day, a task completed, a comment
and an invitation sent in the last 30 days.
"""

# The MCP tools' arguments (`@as_tool`), where the parameter carries no description.
PLAN_ID = "Id of the plan (an `id` from listPlans)."
TASK_ID = "Id of the plan's task (an `id` from getPlan's tasks)."
PLAN_ARGS = {"planId": PLAN_ID}
TASK_ARGS = {"planId": PLAN_ID, "taskId": TASK_ID}
CREATE_PLAN_TASK_COMMENT_ARGS = {
    **TASK_ARGS,
    "body": "The comment, plain text, at most 4,000 characters.",
    "internal": "true: seen by your organization only, never in the buyer's room.",
}
