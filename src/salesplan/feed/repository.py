"""The feed's statements: the account inbox (threads attributed at read time, in the statement
itself), a thread's messages, the analytics buckets, needs-attention, and the organization's own
domains. Every tenant-owned query starts from `scoped`; the service holds the rules."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Connection,
    Date,
    Row,
    SQLColumnExpression,
    and_,
    case,
    cast,
    delete,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.repository import readable
from salesplan.calendar.visibility import reads_teammates
from salesplan.feed.domains import PUBLIC_MAILBOX_PROVIDERS
from salesplan.kit.pagination import CursorCodec, ListParams, ordered_part, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnyRow, AnySelect, OrgScope, TenantScope, in_organization, scoped
from salesplan.models.base import Base
from salesplan.models.calendar import CalendarActionItem, CalendarEvent
from salesplan.models.crm import Account, Contact
from salesplan.models.engage_delivery import EngageMessage, EngageReply
from salesplan.models.feed import FeedMessage, FeedOwnDomain, FeedParticipant, FeedThread
from salesplan.models.identity import Membership, User
from salesplan.models.plans import Plan, PlanTask

MESSAGE_SORT = {"occurredAt": FeedMessage.occurred_at}
# The inbox's key of a thread nothing of which has happened yet (a future meeting): it sorts
# after every thread with activity, and its `lastActivityAt` is null.
NOT_YET = datetime(1900, 1, 1, tzinfo=UTC)
COUNTS = ("sent", "answered", "received", "replies", "meetings", "slack")


# -- own domains ------------------------------------------------------------------------------


def email_domain(dialect: str, column: SQLColumnExpression[str]) -> ColumnElement[str]:
    """The lower-cased domain of an e-mail address column, in SQL."""
    if dialect == "postgresql":
        return func.split_part(func.lower(column), "@", 2)
    return func.substr(func.lower(column), func.instr(column, "@") + 1)


def own_domains_query(dialect: str, organization_id: uuid.UUID) -> CompoundSelect[str]:
    """The organization's own domains, in SQL (one statement of the rule): the inbox takes it as
    a subquery, Slack ingestion runs it."""
    org = OrgScope(organization_id)
    explicit = scoped(select(FeedOwnDomain.domain), org)
    domain = email_domain(dialect, User.email)
    derived = scoped(
        select(domain).join(Membership, Membership.user_id == User.id), org, Membership
    ).where(
        User.email.contains("@"),
        domain.not_in(sorted(PUBLIC_MAILBOX_PROVIDERS)),
        ~exists(explicit),
    )
    return explicit.union_all(derived)


def is_own_address(conn: Connection, organization_id: uuid.UUID, address: str) -> bool:
    """Whether `address` (lower-cased) is one of the organization's users' or of its own
    domains."""
    member = scoped(
        select(User.id).join(Membership, Membership.user_id == User.id),
        OrgScope(organization_id),
        Membership,
    ).where(func.lower(User.email) == address)
    domain = address.rsplit("@", 1)[-1]
    own = own_domains_query(conn.dialect.name, organization_id).scalar_subquery()
    return bool(conn.execute(select(or_(exists(member), literal(domain).in_(own)))).scalar())


async def explicit_own_domains(session: AsyncSession, organization_id: uuid.UUID) -> list[str]:
    stmt = scoped(select(FeedOwnDomain.domain), OrgScope(organization_id))
    return list(await session.scalars(stmt.order_by(FeedOwnDomain.domain)))


async def replace_own_domains(
    session: AsyncSession, organization_id: uuid.UUID, domains: list[str]
) -> None:
    """The organization's explicit own domains become `domains`."""
    await session.execute(
        delete(FeedOwnDomain).where(in_organization(FeedOwnDomain, OrgScope(organization_id)))
    )
    session.add_all(FeedOwnDomain(organization_id=organization_id, domain=d) for d in domains)
    await session.flush()


# -- inbox and threads ------------------------------------------------------------------------


def attribution(
    session: AsyncSession, ctx: TenantScope, account_id: uuid.UUID, *, per_row: bool = False
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
    contact_emails = scoped(select(func.lower(Contact.email)), ctx, Contact).where(
        Contact.account_id == account_id,
        Contact.archived_at.is_(None),
        Contact.email.is_not(None),
    )
    account_domain = scoped(
        select(func.lower(Account.domain)).where(Account.id == account_id), ctx, Account
    ).scalar_subquery()
    own = own_domains_query(session.get_bind().dialect.name, ctx.organization_id)
    participant = scoped(
        select(literal(1)).where(FeedParticipant.thread_id == FeedThread.id),
        ctx,
        FeedParticipant,
    ).where(
        or_(
            FeedParticipant.email.in_(contact_emails.scalar_subquery()),
            and_(
                FeedParticipant.domain == account_domain,
                FeedParticipant.domain.not_in(own.scalar_subquery()),
            ),
        ),
    )
    return exists(participant.offset(0) if per_row else participant)


def visible(ctx: RequestContext) -> ColumnElement[bool]:
    """The threads the caller may see (contract §12): a meeting's thread only when the caller
    may read its event by id (the calendar's own rule); e-mail and Slack threads always."""
    if reads_teammates(ctx):
        return true()
    meeting = scoped(
        select(CalendarEvent.id).where(CalendarEvent.id == FeedThread.calendar_event_id), ctx
    ).where(readable(ctx, CalendarEvent.user_id))
    return or_(FeedThread.kind != "calendar", exists(meeting))


async def inbox_page(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    now: datetime,
    kind: str | None = None,
) -> tuple[list[Any], PaginationMeta]:
    """One page of the account's threads (id, kind, subject, snippet, message_count, activity),
    newest activity that has happened first, then the threads whose only activity is still to
    come (keyed `NOT_YET`)."""
    t = FeedThread

    def part(happened: bool) -> AnySelect:
        """The threads whose latest activity has happened, keyed by it; or whose only activity
        is still to come (a future meeting), keyed `NOT_YET`: after everything that happened."""
        key = t.last_activity_at if happened else literal(NOT_YET, t.last_activity_at.type)
        stmt = scoped(
            select(
                t.id.label("id"),
                t.kind.label("kind"),
                t.subject.label("subject"),
                t.snippet.label("snippet"),
                t.message_count.label("message_count"),
                key.label("activity"),
            ),
            ctx,
            t,
        ).where(
            t.last_activity_at <= now if happened else t.last_activity_at > now,
            attribution(session, ctx, account_id, per_row=not happened),
            visible(ctx),
        )
        stmt = stmt if kind is None else stmt.where(t.kind == kind)
        return ordered_part(stmt, key, t.id, params)

    # Newest activity that has happened first, keyset on (lastActivityAt, id), at any depth:
    # each part walks its threads in that order and stops at the page (`ordered_part`).
    params = replace(params, sort_by="lastActivityAt", order="desc")
    u = union_all(part(True), part(False)).subquery()
    return await paginate(
        session,
        select(u),
        params,
        sort_columns={"lastActivityAt": u.c.activity},
        id_column=u.c.id,
        codec=codec,
    )


async def participants(
    session: AsyncSession, thread_ids: list[uuid.UUID]
) -> list[Row[uuid.UUID, str, str | None]]:
    """(thread_id, email, name) of the threads' participants (threads already scoped)."""
    if not thread_ids:
        return []
    rows = await session.execute(
        select(FeedParticipant.thread_id, FeedParticipant.email, FeedParticipant.name)
        .where(FeedParticipant.thread_id.in_(thread_ids))
        .order_by(FeedParticipant.thread_id, FeedParticipant.email)
    )
    return list(rows)


async def thread_of_account(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    thread_id: uuid.UUID,
    kind: str | None,
) -> bool:
    """Whether the thread is one of the account's the caller may see (of `kind`, if given)."""
    found_stmt = scoped(select(FeedThread.id).where(FeedThread.id == thread_id), ctx).where(
        attribution(session, ctx, account_id),
        visible(ctx),
    )
    if kind is not None:
        found_stmt = found_stmt.where(FeedThread.kind == kind)
    return (await session.execute(found_stmt)).first() is not None


async def messages_page(
    session: AsyncSession,
    ctx: RequestContext,
    thread_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[Any], PaginationMeta]:
    stmt = scoped(select(FeedMessage).where(FeedMessage.thread_id == thread_id), ctx)
    return await paginate(
        session,
        stmt,
        params,
        sort_columns=MESSAGE_SORT,
        id_column=FeedMessage.id,
        codec=codec,
        scalars=True,
    )


# -- analytics --------------------------------------------------------------------------------


def _postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _bucket(
    session: AsyncSession, column: SQLColumnExpression[datetime | None], granularity: str
) -> ColumnElement[object]:
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


def _seconds(
    session: AsyncSession,
    later: SQLColumnExpression[datetime | None],
    earlier: SQLColumnExpression[datetime | None],
) -> SQLColumnExpression[float]:
    if _postgres(session):
        return func.extract("epoch", later - earlier)
    return (func.julianday(later) - func.julianday(earlier)) * 86400.0


async def analytics_rows(
    session: AsyncSession,
    ctx: RequestContext,
    *,
    lo: datetime,
    hi: datetime,
    granularity: Literal["day", "week"],
) -> list[AnyRow]:
    """Counts by bucket (`b`, then one column per `COUNTS`, then the median first response),
    in one statement (one pass over each source, through its (organization, time) index):
    e-mail and Slack of the organization, meetings of the caller (their calendar)."""
    zero = literal(0)

    def part(
        column: SQLColumnExpression[datetime | None],
        model: type[Base],
        where: list[ColumnElement[bool]],
        **flags: ColumnElement[int] | Literal[True],
    ) -> AnySelect:
        cols: list[SQLColumnExpression[object]] = [_bucket(session, column, granularity).label("b")]
        for name in COUNTS:
            value = flags.get(name, zero)
            cols.append((literal(1) if value is True else value).label(name))
        return select(*cols).where(column >= lo, column < hi, in_organization(model, ctx), *where)

    sent = part(
        EngageMessage.sent_at,
        EngageMessage,
        [EngageMessage.channel == "EMAIL"],
        sent=True,
        answered=case((EngageMessage.replied_at.is_not(None), 1), else_=0),
    )
    received = part(
        EngageReply.received_at,
        EngageReply,
        [],
        received=True,
        # A reply answers one of our messages; an auto-reply answers nothing (contract §14).
        replies=case(
            (EngageReply.message_id.is_not(None) & EngageReply.auto_reply.is_(False), 1),
            else_=0,
        ),
    )
    meetings = part(
        CalendarEvent.start_at,
        CalendarEvent,
        [CalendarEvent.user_id == ctx.user_id],
        meetings=True,
    )
    slack = part(FeedMessage.occurred_at, FeedMessage, [FeedMessage.kind == "slack"], slack=True)
    # The median first response over the e-mails sent in the range that were answered.
    delay = _seconds(session, EngageMessage.replied_at, EngageMessage.sent_at)
    answered_filter = [
        in_organization(EngageMessage, ctx),
        EngageMessage.channel == "EMAIL",
        EngageMessage.sent_at >= lo,
        EngageMessage.sent_at < hi,
        EngageMessage.replied_at.is_not(None),
    ]
    if _postgres(session):
        median_stmt: AnySelect = select(func.percentile_cont(0.5).within_group(delay)).where(
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
    return list(rows)


# -- needs attention --------------------------------------------------------------------------


async def attention_page(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    now: datetime,
    unanswered_before: datetime,
) -> tuple[list[Any], PaginationMeta]:
    """Rows (kind, etype, eid, since, label), oldest `since` first: inbound e-mail and Slack
    threads with no answer since before `unanswered_before`, the caller's overdue plan tasks,
    and the caller's past meetings with open action items."""
    me = ctx.user_id
    unanswered = scoped(
        select(
            literal("unanswered_message").label("kind"),
            case((FeedThread.kind == "slack", "slackThread"), else_="emailThread").label("etype"),
            FeedThread.id.label("eid"),
            FeedThread.last_inbound_at.label("since"),
            FeedThread.subject.label("label"),
        ),
        ctx,
        FeedThread,
    ).where(
        FeedThread.kind.in_(("email", "slack")),
        FeedThread.last_inbound_at.is_not(None),
        FeedThread.last_inbound_at < unanswered_before,
        or_(
            FeedThread.last_outbound_at.is_(None),
            FeedThread.last_outbound_at < FeedThread.last_inbound_at,
        ),
    )
    today = now.date()
    overdue = scoped(
        select(
            literal("overdue_task").label("kind"),
            literal("planTask").label("etype"),
            PlanTask.id.label("eid"),
            # the day after the target date: when it became overdue
            PlanTask.target_date.label("since"),
            PlanTask.title.label("label"),
        ).join(Plan, Plan.id == PlanTask.plan_id),
        ctx,
        PlanTask,
    ).where(
        PlanTask.assigned_to_id == me,
        PlanTask.completed.is_(False),
        PlanTask.archived_at.is_(None),
        Plan.archived_at.is_(None),
        PlanTask.target_date < today,
    )
    open_items = scoped(
        select(
            literal("open_action_items").label("kind"),
            literal("calendarEvent").label("etype"),
            CalendarEvent.id.label("eid"),
            CalendarEvent.end_at.label("since"),
            CalendarEvent.title.label("label"),
        ),
        ctx,
        CalendarEvent,
    ).where(
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
    return await paginate(
        session,
        stmt,
        replace(params, sort_by="since"),
        sort_columns={"since": u.c.since},
        id_column=u.c.eid,
        codec=codec,
    )


def _since_text(session: AsyncSession, stmt: AnySelect, *, is_date: bool = False) -> AnySelect:
    """`since` as ISO text `YYYY-MM-DDTHH:MM:SS` (UTC) on both engines."""
    sub = stmt.subquery()
    col = sub.c.since
    if _postgres(session):
        value = (
            func.to_char(col, literal('YYYY-MM-DD"T00:00:00"'))
            if is_date
            else func.to_char(func.timezone("UTC", col), literal('YYYY-MM-DD"T"HH24:MI:SS'))
        )
    else:
        value = func.strftime("%Y-%m-%dT%H:%M:%S", col)
    return select(sub.c.kind, sub.c.etype, sub.c.eid, value.label("since"), sub.c.label)


async def message_row(
    conn: AsyncConnection, scope: TenantScope, message_id: uuid.UUID
) -> AnyRow | None:
    """The organization's feed message `message_id` (its row: the attributes `message_out`
    reads), on a transaction's connection; None if there is none."""
    table = FeedMessage.__table__
    stmt = scoped(select(table).where(table.c.id == message_id), scope, FeedMessage)
    return (await conn.execute(stmt)).first()
