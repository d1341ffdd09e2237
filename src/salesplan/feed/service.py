"""Feed reads: the account inbox (threads attributed at read time), thread reads, analytics
computed in SQL, needs-attention. Services never commit."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Date,
    Select,
    and_,
    case,
    cast,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.visibility import readable, reads_teammates
from salesplan.errors import NotFound, ValidationFailed
from salesplan.feed.domains import own_domains_query
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
from salesplan.kit.pagination import CursorCodec, ListParams, ordered_part, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope, get_scoped, scoped
from salesplan.models.calendar import CalendarActionItem, CalendarEvent
from salesplan.models.crm import Account, Contact
from salesplan.models.engage_delivery import EngageMessage, EngageReply
from salesplan.models.feed import FeedMessage, FeedParticipant, FeedThread
from salesplan.models.plans import Plan, PlanTask
from salesplan.webhooks import events

MESSAGE_SORT = {"occurredAt": FeedMessage.occurred_at}
UNANSWERED_AFTER = timedelta(hours=24)
# The inbox's key of a thread nothing of which has happened yet (a future meeting): it sorts
# after every thread with activity, and its `lastActivityAt` is null.
NOT_YET = datetime(1900, 1, 1, tzinfo=UTC)
MAX_ANALYTICS_DAYS = 366


def _attribution(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, *, per_row: bool = False
) -> ColumnElement[bool]:
    """`EXISTS` a participant of the thread who is one of the account's contacts (whatever the
    domain), or of the account's domain when that is not one of the organization's own domains
    (contract §12: the admin's list, else its users' domains minus public mailbox providers).

    Computed at read time, in the statement itself (no round trip of its own): a contact added,
    moved or archived, or a domain changed, changes the inbox at once, with nothing to
    recompute or keep in step.

    `per_row`: probed thread by thread (the participants' primary key), for a few threads. An
    `OFFSET` keeps PostgreSQL from turning the `EXISTS` into a join, which for the few future
    meetings it planned as a hash of every participant of the organization."""
    org = ctx.organization_id
    contact_emails = select(func.lower(Contact.email)).where(
        Contact.organization_id == org,
        Contact.account_id == account_id,
        Contact.archived_at.is_(None),
        Contact.email.is_not(None),
    )
    account_domain = (
        select(func.lower(Account.domain))
        .where(Account.id == account_id, Account.organization_id == org)
        .scalar_subquery()
    )
    own = own_domains_query(session.get_bind().dialect.name, org)
    participant = select(literal(1)).where(
        FeedParticipant.thread_id == FeedThread.id,
        FeedParticipant.organization_id == org,
        or_(
            FeedParticipant.email.in_(contact_emails.scalar_subquery()),
            and_(
                FeedParticipant.domain == account_domain,
                FeedParticipant.domain.not_in(own.scalar_subquery()),
            ),
        ),
    )
    return exists(participant.offset(0) if per_row else participant)


def _visible(ctx: RequestContext) -> ColumnElement[bool]:
    """The threads the caller may see (contract §12): a meeting's thread only when the caller
    may read its event by id (the calendar's own rule); e-mail and Slack threads always."""
    if reads_teammates(ctx):
        return true()
    meeting = select(CalendarEvent.id).where(
        CalendarEvent.id == FeedThread.calendar_event_id,
        CalendarEvent.organization_id == ctx.organization_id,
        readable(ctx, CalendarEvent.user_id),
    )
    return or_(FeedThread.kind != "calendar", exists(meeting))


async def _account_exists(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID
) -> None:
    await get_scoped(session, Account, ctx, account_id)


async def _participants(
    session: AsyncSession, thread_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[Participant]]:
    out: dict[uuid.UUID, list[Participant]] = {t: [] for t in thread_ids}
    if not thread_ids:
        return out
    rows = await session.execute(
        select(FeedParticipant.thread_id, FeedParticipant.email, FeedParticipant.name)
        .where(FeedParticipant.thread_id.in_(thread_ids))
        .order_by(FeedParticipant.thread_id, FeedParticipant.email)
    )
    for thread_id, email, name in rows:
        out[thread_id].append(Participant(email=email, name=name))
    return out


async def account_inbox(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    kind: str | None = None,
) -> tuple[list[InboxItem], PaginationMeta]:
    t = FeedThread
    now = utcnow()

    def part(happened: bool) -> Any:
        """The threads whose latest activity has happened, keyed by it; or whose only activity
        is still to come (a future meeting), keyed `NOT_YET`: after everything that happened."""
        key = t.last_activity_at if happened else literal(NOT_YET, t.last_activity_at.type)
        stmt: Any = select(
            t.id.label("id"),
            t.kind.label("kind"),
            t.subject.label("subject"),
            t.snippet.label("snippet"),
            t.message_count.label("message_count"),
            key.label("activity"),
        ).where(
            t.organization_id == ctx.organization_id,
            t.last_activity_at <= now if happened else t.last_activity_at > now,
            _attribution(session, ctx, account_id, per_row=not happened),
            _visible(ctx),
        )
        stmt = stmt if kind is None else stmt.where(t.kind == kind)
        return ordered_part(stmt, key, t.id, params)

    # Newest activity that has happened first, keyset on (lastActivityAt, id), at any depth:
    # each part walks its threads in that order and stops at the page (`ordered_part`).
    params = replace(params, sort_by="lastActivityAt", order="desc")
    u = union_all(part(True), part(False)).subquery()
    threads, meta = await paginate(
        session,
        select(u),
        params,
        sort_columns={"lastActivityAt": u.c.activity},
        id_column=u.c.id,
        codec=codec,
    )
    if not threads:  # an empty inbox, or no such account (404): only then the extra read
        await _account_exists(session, ctx, account_id)
    people = await _participants(session, [t.id for t in threads])
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
    belongs = _attribution(session, ctx, account_id)
    found_stmt = select(FeedThread.id).where(
        FeedThread.id == thread_id,
        FeedThread.organization_id == ctx.organization_id,
        belongs,
        _visible(ctx),
    )
    if kind is not None:
        found_stmt = found_stmt.where(FeedThread.kind == kind)
    if (await session.execute(found_stmt)).first() is None:
        raise NotFound("Thread not found.", details={"id": str(thread_id)})
    stmt = select(FeedMessage).where(
        FeedMessage.thread_id == thread_id, FeedMessage.organization_id == ctx.organization_id
    )
    rows, meta = await paginate(
        session,
        stmt,
        params,
        sort_columns=MESSAGE_SORT,
        id_column=FeedMessage.id,
        codec=codec,
        scalars=True,
    )
    return [message_out(m) for m in rows], meta


def message_out(m: FeedMessage) -> FeedMessageOut:
    return FeedMessageOut(
        id=m.id,
        thread_id=m.thread_id,
        type=m.kind,  # type: ignore[arg-type]
        direction=m.direction,  # type: ignore[arg-type]
        author=Author(email=m.author_email, name=m.author_name),
        subject=m.subject,
        text=m.text,
        occurred_at=m.occurred_at,
        channel=m.slack_channel,
        ts=m.slack_ts,
    )


async def record_received(session: AsyncSession, scope: TenantScope, source_key: str) -> int:
    """`feed_message.received` (contract §13) of the feed message just stored from
    `source_key` (an inbound e-mail's `engage_reply:{id}`), as the thread's messages answer
    it, in the session's transaction. Without a subscriber: one indexed read, no lookup."""
    type_ = "feed_message.received"
    if not await events.has_subscribers(session, scope.organization_id, [type_]):
        return 0
    stmt = scoped(select(FeedMessage).where(FeedMessage.source_key == source_key), scope)
    found = (await session.execute(stmt)).scalar_one_or_none()
    if found is None:
        return 0
    return await events.record(session, scope.organization_id, type_, message_out(found))


# -- analytics -------------------------------------------------------------------------------


def _postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _bucket(session: AsyncSession, column: Any, granularity: str) -> Any:
    """The bucket's first day (PostgreSQL: a date; SQLite: text `YYYY-MM-DD`), computed by the
    database, in UTC."""
    if _postgres(session):
        utc = func.timezone("UTC", column)
        if granularity == "week":  # Monday of the ISO week
            return cast(func.date_trunc(literal_column("'week'"), utc), Date)
        return cast(utc, Date)
    if granularity == "week":  # Monday of the week (ISO weeks, like date_trunc)
        return func.date(column, "weekday 0", "-6 days")
    return func.date(column)


def _seconds(session: AsyncSession, later: Any, earlier: Any) -> Any:
    if _postgres(session):
        return func.extract("epoch", later - earlier)
    return (func.julianday(later) - func.julianday(earlier)) * 86400.0


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


COUNTS = ("sent", "answered", "received", "replies", "meetings", "slack")


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
    org = ctx.organization_id
    zero = literal(0)

    def part(column: Any, where: list[Any], **flags: Any) -> Select[Any]:
        cols = [_bucket(session, column, granularity).label("b")]
        for name in COUNTS:
            value = flags.get(name, zero)
            cols.append((literal(1) if value is True else value).label(name))
        return select(*cols).where(column >= lo, column < hi, *where)

    sent = part(
        EngageMessage.sent_at,
        [EngageMessage.organization_id == org, EngageMessage.channel == "EMAIL"],
        sent=True,
        answered=case((EngageMessage.replied_at.is_not(None), 1), else_=0),
    )
    received = part(
        EngageReply.received_at,
        [EngageReply.organization_id == org],
        received=True,
        replies=case((EngageReply.message_id.is_not(None), 1), else_=0),
    )
    meetings = part(
        CalendarEvent.start_at,
        [CalendarEvent.organization_id == org, CalendarEvent.user_id == ctx.user_id],
        meetings=True,
    )
    slack = part(
        FeedMessage.occurred_at,
        [FeedMessage.organization_id == org, FeedMessage.kind == "slack"],
        slack=True,
    )
    # The median first response over the e-mails sent in the range that were answered.
    delay = _seconds(session, EngageMessage.replied_at, EngageMessage.sent_at)
    answered_filter = [
        EngageMessage.organization_id == org,
        EngageMessage.channel == "EMAIL",
        EngageMessage.sent_at >= lo,
        EngageMessage.sent_at < hi,
        EngageMessage.replied_at.is_not(None),
    ]
    if _postgres(session):
        median_stmt: Select[Any] = select(func.percentile_cont(0.5).within_group(delay)).where(
            *answered_filter
        )
    else:
        ranked = (
            select(
                delay.label("d"),
                func.row_number().over(order_by=delay).label("n"),
                func.count().over().label("c"),
            )
            .where(*answered_filter)
            .subquery()
        )
        median_stmt = select(func.avg(ranked.c.d)).where(
            ranked.c.n.in_([(ranked.c.c + 1) // 2, (ranked.c.c + 2) // 2])
        )
    # One statement: the buckets, with the median (an uncorrelated subquery, run once) beside.
    u = union_all(sent, received, meetings, slack).subquery()
    rows = await session.execute(
        select(
            u.c.b,
            *(func.sum(u.c[name]) for name in COUNTS),
            median_stmt.scalar_subquery().label("median"),
        ).group_by(u.c.b)
    )
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
    org = ctx.organization_id
    me = ctx.user_id
    unanswered = select(
        literal("unanswered_message").label("kind"),
        case((FeedThread.kind == "slack", "slackThread"), else_="emailThread").label("etype"),
        FeedThread.id.label("eid"),
        FeedThread.last_inbound_at.label("since"),
        FeedThread.subject.label("label"),
    ).where(
        FeedThread.organization_id == org,
        FeedThread.kind.in_(("email", "slack")),
        FeedThread.last_inbound_at.is_not(None),
        FeedThread.last_inbound_at < now - UNANSWERED_AFTER,
        or_(
            FeedThread.last_outbound_at.is_(None),
            FeedThread.last_outbound_at < FeedThread.last_inbound_at,
        ),
    )
    today = now.date()
    overdue = (
        select(
            literal("overdue_task").label("kind"),
            literal("planTask").label("etype"),
            PlanTask.id.label("eid"),
            # the day after the target date: when it became overdue
            PlanTask.target_date.label("since"),
            PlanTask.title.label("label"),
        )
        .join(Plan, Plan.id == PlanTask.plan_id)
        .where(
            PlanTask.organization_id == org,
            PlanTask.assigned_to_id == me,
            PlanTask.completed.is_(False),
            PlanTask.archived_at.is_(None),
            Plan.archived_at.is_(None),
            PlanTask.target_date < today,
        )
    )
    open_items = select(
        literal("open_action_items").label("kind"),
        literal("calendarEvent").label("etype"),
        CalendarEvent.id.label("eid"),
        CalendarEvent.end_at.label("since"),
        CalendarEvent.title.label("label"),
    ).where(
        CalendarEvent.organization_id == org,
        CalendarEvent.user_id == me,
        CalendarEvent.end_at < now,
        exists().where(
            CalendarActionItem.event_id == CalendarEvent.id,
            CalendarActionItem.completed.is_(False),
        ),
    )
    # Dates and date-times differ by engine: normalise `since` to text that sorts in time order.
    u = union_all(
        _since_text(session, unanswered),
        _since_text(session, overdue, is_date=True),
        _since_text(session, open_items),
    ).subquery()
    stmt = select(u.c.kind, u.c.etype, u.c.eid, u.c.since, u.c.label)
    rows, meta = await paginate(
        session,
        stmt,
        replace(params, sort_by="since"),
        sort_columns={"since": u.c.since},
        id_column=u.c.eid,
        codec=codec,
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


def _since_text(session: AsyncSession, stmt: Any, *, is_date: bool = False) -> Any:
    """`since` as ISO text `YYYY-MM-DDTHH:MM:SS` (UTC) on both engines."""
    sub = stmt.subquery()
    col = sub.c.since
    if session.get_bind().dialect.name == "postgresql":
        value = (
            func.to_char(col, literal('YYYY-MM-DD"T00:00:00"'))
            if is_date
            else func.to_char(func.timezone("UTC", col), literal('YYYY-MM-DD"T"HH24:MI:SS'))
        )
    else:
        value = func.strftime("%Y-%m-%dT%H:%M:%S", col)
    return select(sub.c.kind, sub.c.etype, sub.c.eid, value.label("since"), sub.c.label)


def _parse_since(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
