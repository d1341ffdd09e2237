"""Who may read a calendar event (contract §7 "calendar", §12 "Feed visibility"): its owner, and
`admin` and `consultant` members of the organization; not other members, not app tokens (which
have no user). The one statement of the rule: the calendar's reads and the feed's meeting threads
both apply it (in SQL: `calendar.repository.readable`)."""

from __future__ import annotations

import uuid

from salesplan.auth.principal import RequestContext

TEAM_READERS = ("admin", "consultant")


def reads_teammates(ctx: RequestContext) -> bool:
    """Whether the caller may read every member's events (a user-backed admin or consultant)."""
    return ctx.user_id is not None and ctx.role in TEAM_READERS


def may_read(ctx: RequestContext, owner_id: uuid.UUID) -> bool:
    """Whether the caller may read an event of `owner_id` by id."""
    return reads_teammates(ctx) or (ctx.user_id is not None and owner_id == ctx.user_id)
