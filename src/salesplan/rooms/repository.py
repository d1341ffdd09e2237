"""SQL of buyer rooms: shares and their links, codes and sessions; the room's settings; task
comments; and what the room's read model reads beside the plan's own statements.

A buyer's request has no organization until its token is found: the token's hash is the key
(`share_by_token`), as an API key's is. Everything after that is scoped to the share's
organization."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import ScalarSelect

from salesplan.kit.clock import utcnow
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.scoping import AnyRow, SqlColumn, TenantScope, organization_parameter, scoped
from salesplan.models.crm import Account, Contact
from salesplan.models.identity import Membership, Organization, User
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.models.rooms import (
    PlanRoom,
    PlanShare,
    PlanShareCode,
    PlanShareLink,
    PlanShareSession,
    PlanTaskComment,
)
from salesplan.plans.write_repository import plan_account

Db = AsyncSession | AsyncConnection
T = TypeVar("T")


class ShareRepository(Repository[PlanShare]):
    model = PlanShare
    sort_columns = sorts(PlanShare)


class CommentRepository(Repository[PlanTaskComment]):
    model = PlanTaskComment
    sort_columns = {"createdAt": PlanTaskComment.created_at}


# --- the plan's account ------------------------------------------------------------------------


async def account_of_plan(session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID) -> Any:
    """(id, name, domain) of the plan's account, or None (a USER plan)."""
    account_id = plan_account(plan_id)
    stmt = scoped(
        select(Account.id, Account.name, Account.domain).where(Account.id == account_id),
        scope,
        Account,
    )
    return (await session.execute(stmt, {"organization_id": scope.organization_id})).first()


async def account_contact(
    session: AsyncSession, scope: TenantScope, account_id: uuid.UUID, contact_id: uuid.UUID
) -> Contact | None:
    """A live contact of the account."""
    stmt = scoped(select(Contact), scope, Contact).where(
        Contact.id == contact_id, Contact.account_id == account_id, Contact.archived_at.is_(None)
    )
    found: Contact | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def account_contact_by_mailbox(
    session: AsyncSession, scope: TenantScope, account_id: uuid.UUID, mailbox: str
) -> Contact | None:
    """The account's oldest live contact with this address (kit.email.mailbox'd)."""
    stmt = (
        scoped(select(Contact), scope, Contact)
        .where(
            Contact.email_mailbox == mailbox,
            Contact.account_id == account_id,
            Contact.archived_at.is_(None),
        )
        .order_by(Contact.created_at, Contact.id)
        .limit(1)
    )
    found: Contact | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def user_name(session: AsyncSession, user_id: uuid.UUID | None) -> str:
    if user_id is None:
        return ""
    found = await session.scalar(select(User.full_name).where(User.id == user_id))
    return str(found or "")


async def organization_name(session: AsyncSession, scope: TenantScope) -> str:
    found = await session.scalar(
        select(Organization.name).where(Organization.id == scope.organization_id)
    )
    return str(found or "")


# --- shares and their links --------------------------------------------------------------------


def add_link(session: AsyncSession, share: PlanShare, token_hash: str) -> None:
    session.add(
        PlanShareLink(
            token_hash=token_hash, share_id=share.id, organization_id=share.organization_id
        )
    )


async def share_by_token(session: AsyncSession, token_hash: str) -> Any:
    """The share a link token opens, with what every room page needs: (share, plan name,
    plan archived_at, organization name). One statement, whatever the outcome: an unknown
    token costs what a revoked one does."""
    stmt = (
        select(PlanShare, Plan.name, Plan.archived_at, Organization.name)
        .select_from(PlanShareLink)
        .join(PlanShare, PlanShare.id == PlanShareLink.share_id)
        .join(Plan, Plan.id == PlanShare.plan_id)
        .join(Organization, Organization.id == PlanShare.organization_id)
        .where(PlanShareLink.token_hash == token_hash)
    )
    return (await session.execute(stmt)).first()


async def shares_sent_since(
    session: AsyncSession, scope: TenantScope, inviter_id: uuid.UUID, since: datetime
) -> int:
    """How many shares the share `inviter_id` invited since `since`."""
    stmt = scoped(select(func.count()).select_from(PlanShare), scope, PlanShare).where(
        PlanShare.invited_by_share_id == inviter_id, PlanShare.created_at > since
    )
    return int((await session.execute(stmt)).scalar_one())


# --- sign-in codes and room sessions ---------------------------------------------------------


async def codes_since(session: AsyncSession, share_id: uuid.UUID, since: datetime) -> int:
    stmt = select(func.count()).where(
        PlanShareCode.share_id == share_id, PlanShareCode.created_at > since
    )
    return int((await session.execute(stmt)).scalar_one())


async def spend_try(session: AsyncSession, share_id: uuid.UUID, now: datetime, tries: int) -> Any:
    """One try of the share's newest code, counted before it is compared, in one statement
    (so that concurrent guesses never exceed `tries`): (id, code_hash, attempts), or None
    when it is used, expired or out of tries (or there is none). Also the tries spent."""
    newest = (
        select(PlanShareCode.id)
        .where(PlanShareCode.share_id == share_id)
        .order_by(PlanShareCode.created_at.desc(), PlanShareCode.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    stmt = (
        update(PlanShareCode)
        .where(
            PlanShareCode.id == newest,
            PlanShareCode.used_at.is_(None),
            PlanShareCode.expires_at > now,
            PlanShareCode.attempts < tries,
        )
        .values(attempts=PlanShareCode.attempts + 1)
        .returning(PlanShareCode.id, PlanShareCode.code_hash, PlanShareCode.attempts)
        .execution_options(synchronize_session=False)
    )
    return (await session.execute(stmt)).first()


async def use_code(session: AsyncSession, code_id: uuid.UUID, now: datetime) -> None:
    await session.execute(
        update(PlanShareCode)
        .where(PlanShareCode.id == code_id)
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )


async def room_session(
    session: AsyncSession, share_id: uuid.UUID, session_hash: str
) -> PlanShareSession | None:
    """The live room session of this cookie, bound to this share."""
    stmt = select(PlanShareSession).where(
        PlanShareSession.session_hash == session_hash,
        PlanShareSession.share_id == share_id,
        PlanShareSession.expires_at > utcnow(),
    )
    found: PlanShareSession | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def set_flash(
    session: AsyncSession, session_id: uuid.UUID, flash: dict[str, Any] | None
) -> None:
    await session.execute(
        update(PlanShareSession)
        .where(PlanShareSession.id == session_id)
        .values(flash=flash)
        .execution_options(synchronize_session=False)
    )


async def delete_room_session(session: AsyncSession, session_id: uuid.UUID) -> None:
    row = await session.get(PlanShareSession, session_id)
    if row is not None:
        await session.delete(row)


async def delete_stale(session: AsyncSession, codes_before: datetime, now: datetime) -> None:
    """Codes made before `codes_before` (long past their 10 minutes and the hourly count)
    and room sessions past their expiry."""
    await session.execute(delete(PlanShareCode).where(PlanShareCode.created_at < codes_before))
    await session.execute(delete(PlanShareSession).where(PlanShareSession.expires_at <= now))


# --- room settings -----------------------------------------------------------------------------


async def room_settings(db: Db, scope: TenantScope, plan_id: uuid.UUID) -> Any:
    """(hidden milestone ids, hidden goal ids, hidden task ids, welcome message), or None."""
    stmt = scoped(
        select(
            PlanRoom.hidden_milestone_ids,
            PlanRoom.hidden_goal_ids,
            PlanRoom.hidden_task_ids,
            PlanRoom.welcome_message,
        ).where(PlanRoom.plan_id == plan_id),
        scope,
        PlanRoom,
    )
    return (await db.execute(stmt)).first()


async def room_row(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID
) -> PlanRoom | None:
    stmt = scoped(select(PlanRoom), scope, PlanRoom).where(PlanRoom.plan_id == plan_id)
    found: PlanRoom | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


_CHILD_MODELS = {"milestones": PlanMilestone, "goals": PlanGoal, "tasks": PlanTask}


async def ids_of_plan(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID, kind: str, ids: Collection[Any]
) -> set[Any]:
    """Which of `ids` are the plan's milestones, goals or tasks (`kind`), archived or not."""
    model: Any = _CHILD_MODELS[kind]
    stmt = scoped(select(model.id), scope, model).where(model.plan_id == plan_id, model.id.in_(ids))
    return set((await session.execute(stmt)).scalars())


# --- what the room's read model reads ------------------------------------------------------------


async def people(
    conn: AsyncConnection, scope: TenantScope, ids: Collection[Any]
) -> tuple[dict[Any, str], dict[Any, str]]:
    """Names of the users (members of the organization) and of the contacts among `ids`:
    ({user id: full name}, {contact id: full name}). Never an e-mail address."""
    if not ids:
        return {}, {}
    members = select(User.id, User.full_name).join(Membership, Membership.user_id == User.id)
    users = await conn.execute(scoped(members.where(User.id.in_(list(ids))), scope, Membership))
    contacts = await conn.execute(
        scoped(
            select(Contact.id, Contact.first_name, Contact.last_name).where(
                Contact.id.in_(list(ids))
            ),
            scope,
            Contact,
        )
    )
    return (
        {row[0]: str(row[1] or "") for row in users},
        {row[0]: " ".join(p for p in (row[1], row[2]) if p) for row in contacts},
    )


async def room_comments(
    conn: AsyncConnection, scope: TenantScope, plan_id: uuid.UUID
) -> Sequence[AnyRow]:
    """The plan's comments that may reach its room (never `internal` ones), oldest first:
    (id, task id, body, author type, author name, created at)."""
    stmt = scoped(
        select(
            PlanTaskComment.id,
            PlanTaskComment.task_id,
            PlanTaskComment.body,
            PlanTaskComment.author_type,
            PlanTaskComment.author_name,
            PlanTaskComment.created_at,
        ).where(PlanTaskComment.plan_id == plan_id, PlanTaskComment.internal.is_(False)),
        scope,
        PlanTaskComment,
    ).order_by(PlanTaskComment.created_at, PlanTaskComment.id)
    return (await conn.execute(stmt)).all()


async def account_name_of_plan(
    conn: AsyncConnection, scope: TenantScope, plan_id: uuid.UUID
) -> str:
    stmt = scoped(select(Account.name).where(Account.id == plan_account(plan_id)), scope, Account)
    found = (await conn.execute(stmt, {"organization_id": scope.organization_id})).scalar()
    return str(found or "")


def _stamp_columns(
    organization: SqlColumn,
) -> tuple[SqlColumn | ScalarSelect[int] | ScalarSelect[datetime], ...]:
    """What a room page is rendered from besides names (see `room_stamp`), of `Plan` (joined
    with `PlanRoom` by `_room_of_plan`) in `organization`."""

    def of_comments(column: ColumnElement[T]) -> ScalarSelect[T]:
        return (
            select(column)
            .where(
                PlanTaskComment.plan_id == Plan.id,
                PlanTaskComment.organization_id == organization,
                PlanTaskComment.internal.is_(False),
            )
            .scalar_subquery()
        )

    return (
        Plan.version,
        PlanRoom.hidden_milestone_ids,
        PlanRoom.hidden_goal_ids,
        PlanRoom.hidden_task_ids,
        PlanRoom.welcome_message,
        of_comments(func.count()),
        of_comments(func.max(PlanTaskComment.created_at)),
    )


def _room_of_plan(organization: SqlColumn) -> ColumnElement[bool]:
    return (PlanRoom.plan_id == Plan.id) & (PlanRoom.organization_id == organization)


_ROOM_STAMP = (
    select(*_stamp_columns(bindparam("organization_id")))
    .select_from(Plan)
    .outerjoin(PlanRoom, _room_of_plan(bindparam("organization_id")))
    .where(Plan.id == bindparam("plan_id"), organization_parameter(Plan))
)
STAMP_WIDTH = len(_ROOM_STAMP.selected_columns)

# The share a link token opens, its plan's name and archival, its organization's name, the
# room session among the request's room cookies (by hash; bound to the share, live), and the
# room's stamp: everything a room GET reads, in one statement.
_ROOM_DOOR = (
    select(
        PlanShare.id,
        PlanShare.organization_id,
        PlanShare.plan_id,
        PlanShare.contact_id,
        PlanShare.role,
        PlanShare.allow_invites,
        PlanShare.revoked_at,
        PlanShare.expires_at,
        PlanShare.last_viewed_at,
        PlanShare.view_counted_at,
        Plan.name,
        Plan.archived_at,
        Organization.name,
        PlanShareSession.id,
        PlanShareSession.session_hash,
        PlanShareSession.flash,
        *_stamp_columns(PlanShare.organization_id),
    )
    .select_from(PlanShareLink)
    .join(PlanShare, PlanShare.id == PlanShareLink.share_id)
    .join(
        Plan,
        (Plan.id == PlanShare.plan_id) & (Plan.organization_id == PlanShare.organization_id),
    )
    .join(Organization, Organization.id == PlanShare.organization_id)
    .outerjoin(
        PlanShareSession,
        (PlanShareSession.share_id == PlanShare.id)
        & PlanShareSession.session_hash.in_(bindparam("sessions", expanding=True))
        & (PlanShareSession.expires_at > bindparam("now")),
    )
    .outerjoin(PlanRoom, _room_of_plan(PlanShare.organization_id))
    .where(PlanShareLink.token_hash == bindparam("token_hash"))
    .limit(1)
)


def stamp_of(values: Sequence[object]) -> tuple[object, ...]:
    """A stamp comparable across reads (JSON arrays as tuples)."""
    return tuple(tuple(v) if isinstance(v, list) else v for v in values)


async def room_door(
    conn: AsyncConnection, token_hash: str, session_hashes: Sequence[str], now: datetime
) -> AnyRow | None:
    """`_ROOM_DOOR`'s row for a link token (None: the token opens nothing). One statement,
    whatever it finds."""
    params = {"token_hash": token_hash, "sessions": list(session_hashes), "now": now}
    return (await conn.execute(_ROOM_DOOR, params)).first()


async def room_stamp(db: Db, scope: TenantScope, plan_id: uuid.UUID) -> tuple[object, ...] | None:
    """What a room page is rendered from besides names, in one statement: the plan's version
    (every write to the plan and its children moves it), the room's settings and its
    comments' count and newest time. Equal stamps, equal pages. None: no such plan."""
    params = {"plan_id": plan_id, "organization_id": scope.organization_id}
    row = (await db.execute(_ROOM_STAMP, params)).first()
    return None if row is None else stamp_of(row)
