"""Comments on a plan's tasks (contract §16): written by a user through the API (seller side,
`internal` ones never reach the room) or by a contact in the room (`buyer.py`). Plain text,
at most 4,000 characters, rendered escaped. The author's name is kept as written, never an
address: a user's full name, else the organization's."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope, get_scoped, not_found
from salesplan.models.plans import Plan, PlanTask
from salesplan.models.rooms import PlanShare, PlanTaskComment
from salesplan.plans.checks import child_row, live_child
from salesplan.rooms import repository as repo
from salesplan.rooms.schemas import Author, CommentIn, CommentOut


def comment_out(row: PlanTaskComment) -> CommentOut:
    author_id = row.author_user_id if row.author_type == "user" else row.author_contact_id
    return CommentOut(
        id=row.id,
        task_id=row.task_id,
        body=row.body,
        author=Author(type=row.author_type, id=author_id, name=row.author_name),
        internal=row.internal,
        created_at=row.created_at,
    )


async def list_comments(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[CommentOut], PaginationMeta]:
    """The task's comments, internal ones included (the seller's side reads them all)."""
    await get_scoped(session, Plan, ctx, plan_id)
    await child_row(session, ctx, PlanTask, plan_id, task_id)
    rows, meta = await repo.CommentRepository(session, ctx).list(
        params, codec, where=[PlanTaskComment.task_id == task_id]
    )
    return [comment_out(r) for r in rows], meta


async def create_comment(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: CommentIn,
) -> CommentOut:
    """A user's comment on a live task of a live plan (an archived plan's content is
    read-only: 422)."""
    task = await live_child(session, ctx, PlanTask, plan_id, task_id)
    if task.archived_at is not None:
        raise not_found(PlanTask, task_id)
    name = await repo.user_name(session, ctx.user_id) or await repo.organization_name(session, ctx)
    row = add_comment(
        session,
        ctx,
        plan_id,
        task_id,
        body.body,
        internal=body.internal,
        author_type="user",
        author_user_id=ctx.user_id,
        author_name=name,
    )
    await session.flush()
    return comment_out(row)


def add_comment(
    session: AsyncSession,
    scope: TenantScope,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    text: str,
    **author: Any,
) -> PlanTaskComment:
    row = PlanTaskComment(
        organization_id=scope.organization_id,
        plan_id=plan_id,
        task_id=task_id,
        body=text,
        **author,
    )
    session.add(row)
    return row


def contact_comment(
    session: AsyncSession, share: PlanShare, task_id: uuid.UUID, text: str, name: str
) -> PlanTaskComment:
    """A buyer's comment, from the room of `share`."""
    return add_comment(
        session,
        share,
        share.plan_id,
        task_id,
        text,
        internal=False,
        author_type="contact",
        author_contact_id=share.contact_id,
        author_name=name,
        share_id=share.id,
    )
