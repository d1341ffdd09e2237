"""Feed reads: the account inbox (threads attributed at read time), thread reads, analytics
computed in SQL, needs-attention; the organization's own domains. The rules and the answers' shape
live here, the statements in `feed/repository.py`. Services never commit."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound, ValidationFailed
from salesplan.feed import repository as repo
from salesplan.feed.schemas import (
    AnalyticsOut,
    AttentionItem,
    Author,
    Bucket,
    FeedMessageOut,
    InboxItem,
    Participant,
    Totals,
)
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped
from salesplan.models.crm import Account
from salesplan.models.feed import FeedMessage
from salesplan.models.identity import Organization

UNANSWERED_AFTER = timedelta(hours=24)
MAX_ANALYTICS_DAYS = 366
NOT_YET = repo.NOT_YET
COUNTS = repo.COUNTS


async def _account_exists(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID
) -> None:
    await get_scoped(session, Account, ctx, account_id)


async def account_inbox(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    kind: str | None = None,
) -> tuple[list[InboxItem], PaginationMeta]:
    threads, meta = await repo.inbox_page(
        session, ctx, account_id, params, codec, now=utcnow(), kind=kind
    )
    if not threads:  # an empty inbox, or no such account (404): only then the extra read
        await _account_exists(session, ctx, account_id)
    people: dict[uuid.UUID, list[Participant]] = {t.id: [] for t in threads}
    for thread_id, email, name in await repo.participants(session, list(people)):
        people[thread_id].append(Participant(email=email, name=name))
    items = [
        InboxItem(
            id=t.id,
            type=t.kind,
            subject=t.subject,
            participants=people[t.id],
            snippet=t.snippet,
            message_count=t.message_count,
            last_activity_at=None if t.activity == NOT_YET else t.activity,
        )
        for t in threads
    ]
    return items, meta


async def thread_messages(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    thread_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    kind: str | None = None,
) -> tuple[list[FeedMessageOut], PaginationMeta]:
    """A thread of the account, oldest message first; a thread of another account, kind or
    organization is a 404."""
    await _account_exists(session, ctx, account_id)
    if not await repo.thread_of_account(session, ctx, account_id, thread_id, kind):
        raise NotFound("Thread not found.", details={"id": str(thread_id)})
    rows, meta = await repo.messages_page(session, ctx, thread_id, params, codec)
    return [message_out(m) for m in rows], meta


def message_out(m: FeedMessage | Row[Any]) -> FeedMessageOut:
    """A feed message as the thread's messages answer it (from its object or its row)."""
    return FeedMessageOut(
        id=m.id,
        thread_id=m.thread_id,
        type=m.kind,
        direction=m.direction,
        author=Author(email=m.author_email, name=m.author_name),
        subject=m.subject,
        text=m.text,
        occurred_at=m.occurred_at,
        channel=m.slack_channel,
        ts=m.slack_ts,
    )


# -- analytics -------------------------------------------------------------------------------


def analytics_range(start: date | None, end: date | None, today: date) -> tuple[date, date]:
    end = end or today
    start = start or (end - timedelta(days=29))
    if start > end:
        raise ValidationFailed.at(["query", "from"], "from must not be after to.")
    if (end - start).days + 1 > MAX_ANALYTICS_DAYS:
        raise ValidationFailed.at(
            ["query", "from"], f"The range may span at most {MAX_ANALYTICS_DAYS} days."
        )
    return start, end


async def analytics(
    session: AsyncSession,
    ctx: RequestContext,
    *,
    start: date | None,
    end: date | None,
    granularity: Literal["day", "week"],
) -> AnalyticsOut:
    """Counts by bucket, computed by the database in one statement (one pass over each source,
    through its (organization, time) index), and the median first response in a second: e-mail
    and Slack of the organization, meetings of the caller (their calendar)."""
    first, last = analytics_range(start, end, utcnow().date())
    lo = datetime.combine(first, time(), UTC)
    hi = datetime.combine(last + timedelta(days=1), time(), UTC)
    rows = await repo.analytics_rows(session, ctx, lo=lo, hi=hi, granularity=granularity)
    counts: dict[str, list[int]] = {}
    median = None
    for r in rows:
        key = r[0].isoformat() if isinstance(r[0], date) else str(r[0])
        counts[key] = [int(v or 0) for v in r[1:-1]]
        median = r[-1]

    buckets: list[Bucket] = []
    day = first if granularity == "day" else first - timedelta(days=first.weekday())
    step = timedelta(days=1 if granularity == "day" else 7)
    while day <= last:
        c = counts.get(day.isoformat(), [0] * len(COUNTS))
        buckets.append(
            Bucket(
                start=day,
                sent=c[0],
                received=c[2],
                replies=c[3],
                meetings=c[4],
                slack_messages=c[5],
            )
        )
        day += step
    total = [sum(b[i] for b in counts.values()) for i in range(len(COUNTS))]
    n_sent, n_answered = total[0], total[1]
    return AnalyticsOut(
        granularity=granularity,
        **{"from": first},
        to=last,
        buckets=buckets,
        totals=Totals(
            sent=n_sent,
            received=total[2],
            replies=total[3],
            meetings=total[4],
            slack_messages=total[5],
            reply_rate=round(n_answered / n_sent, 4) if n_sent else None,
            median_first_response_seconds=round(float(median), 3) if median is not None else None,
        ),
    )


# -- needs attention -------------------------------------------------------------------------


async def needs_attention(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[AttentionItem], PaginationMeta]:
    """Inbound e-mail and Slack threads unanswered for over 24 h, the caller's overdue plan
    tasks, and the caller's past meetings with open action items; oldest first."""
    now = utcnow()
    rows, meta = await repo.attention_page(
        session, ctx, params, codec, now=now, unanswered_before=now - UNANSWERED_AFTER
    )
    items: list[AttentionItem] = []
    for r in rows:
        m = r._mapping
        since = _parse_since(m["since"])
        label = m["label"] or "(no subject)"
        if m["kind"] == "unanswered_message":
            hours = int((now - since).total_seconds() // 3600)
            reason = f'No answer for {hours} h to "{label}".'
        elif m["kind"] == "overdue_task":
            reason = f'Task "{label}" was due {since.date().isoformat()}.'
        else:
            reason = f'Meeting "{label}" has open action items.'
        items.append(
            AttentionItem(
                kind=m["kind"],
                reason=reason,
                entity_type=m["etype"],
                entity_id=uuid.UUID(str(m["eid"])),
                since=since,
            )
        )
    return items, meta


def _parse_since(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# -- own domains -------------------------------------------------------------------------------


async def explicit_own_domains(session: AsyncSession, organization_id: uuid.UUID) -> list[str]:
    """The organization's explicit own domains (the admin's list), sorted."""
    return await repo.explicit_own_domains(session, organization_id)


async def set_own_domains(
    session: AsyncSession, organization_id: uuid.UUID, domains: list[str]
) -> list[str]:
    """The organization's explicit own domains become `domains` (already parsed by
    `feed.domains.parse_own_domains`); an empty list goes back to its users' domains. Answers
    the list stored."""
    if await session.get(Organization, organization_id) is None:
        raise NotFound("Organization not found.", details={"id": str(organization_id)})
    await repo.replace_own_domains(session, organization_id, domains)
    return sorted(domains)
