"""The plan version: one counter per plan that every write to the plan or to its milestones,
goals and tasks bumps, in the same transaction (getPlan's ETag, see `etag`).

One mechanism, session events, so that no service function has to remember it:
- `before_flush`: new, modified or deleted Plan / PlanMilestone / PlanGoal / PlanTask objects
  bump their plan (a new plan starts at 1);
- `do_orm_execute`: a bulk UPDATE or DELETE run through the session against a child table bumps
  every plan owning a row it matches (`UPDATE plans … WHERE id IN (SELECT plan_id FROM <child>
  WHERE <the statement's own condition>)`, run just before it); one against `plans` sets
  `version = version + 1` itself.

The bump runs before the write it accounts for: a reader that sees the new version (one
statement) then reads the children (later statements) sees the write too, so a version never
labels an older body than its own."""

from __future__ import annotations

import uuid
from itertools import chain
from typing import Any

from sqlalchemy import event, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session
from starlette.responses import Response

from salesplan.errors import NotFound
from salesplan.kit.responses import json_response
from salesplan.kit.scoping import TenantScope, scoped
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans.render import plan_base

P: Any = Plan.__table__
CHILDREN = (PlanMilestone, PlanGoal, PlanTask)
CHILD_TABLES: dict[str, Any] = {m.__tablename__: m.__table__ for m in CHILDREN}
_BUMP = P.c.version + 1


def bump(ids: Any) -> Any:
    """UPDATE plans SET version = version + 1 for `ids` (a collection or a subquery)."""
    return update(P).where(P.c.id.in_(ids)).values(version=_BUMP)


def touch_plan(session: Session, plan_id: Any) -> None:
    """Bump one plan by hand, for a write the events cannot see (SQL on a raw connection)."""
    session.connection().execute(bump([plan_id]))


@event.listens_for(Session, "before_flush")
def _bump_on_flush(session: Session, _context: Any, _instances: Any) -> None:
    ids: set[Any] = set()
    deleted = session.deleted
    for obj in chain(session.new, session.dirty, deleted):
        if isinstance(obj, Plan):
            if obj not in session.new and (obj in deleted or session.is_modified(obj)):
                ids.add(obj.id)
        elif isinstance(obj, CHILDREN) and (
            obj in session.new or obj in deleted or session.is_modified(obj)
        ):
            ids.add(obj.plan_id)
    ids.discard(None)
    if ids:
        session.connection().execute(bump(sorted(ids, key=str)))


@event.listens_for(Session, "do_orm_execute")
def _bump_on_bulk(state: ORMExecuteState) -> None:
    if not (state.is_update or state.is_delete):
        return
    statement: Any = state.statement
    # By name: an ORM statement's table is an annotated copy of the mapped one.
    name = getattr(getattr(statement, "table", None), "name", None)
    if name == P.name:
        if state.is_update and "version" not in _set_keys(statement):
            state.statement = statement.values(version=_BUMP)
        return
    if name in CHILD_TABLES:
        table = CHILD_TABLES[name]
        owners = select(table.c.plan_id).distinct()
        if statement.whereclause is not None:
            owners = owners.where(statement.whereclause)
        state.session.connection().execute(bump(owners))


def _set_keys(statement: Any) -> set[str]:
    keys = set()
    for key in getattr(statement, "_values", None) or {}:
        keys.add(getattr(key, "key", key))
    return keys


# --- the ETag ----------------------------------------------------------------------------------

# Bump when the rendering of a plan changes (a new field, a new format): the same version then
# names a different body, so it must be a different tag.
RENDERING = "1"


def etag(version: int) -> str:
    """Strong: getPlan has no query parameter and its body does not depend on who reads it,
    so the version (and the rendering) determine the body byte for byte."""
    return f'"{version}.{RENDERING}"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """RFC 9110 §13.1.2: `*`, or any listed tag equal under the weak comparison."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == wanted for part in if_none_match.split(","))


async def plan_version(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> int | None:
    """The plan's version in the caller's organization (None: not found there). One statement
    on the primary key."""
    stmt = scoped(select(P.c.version).where(P.c.id == plan_id), ctx, Plan)
    return (await conn.execute(stmt)).scalar_one_or_none()


async def get_plan(
    session: AsyncSession, ctx: TenantScope, plan_id: uuid.UUID, if_none_match: str | None
) -> Response:
    """getPlan with revalidation. With If-None-Match: one indexed statement, and a 304 without
    a body when the tag is current. Otherwise the full read, the version taken by the plan's
    own statement, before the children's: the tag never names a body older than the one sent."""
    conn = await session.connection()
    if if_none_match:
        version = await plan_version(conn, ctx, plan_id)
        if version is None:
            raise NotFound("Plan not found.", details={"id": str(plan_id)})
        tag = etag(version)
        if matches(if_none_match, tag):
            return Response(status_code=304, headers={"ETag": tag})
    stmt = scoped(select(*repo.PLAN_COLUMNS, P.c.version).where(P.c.id == plan_id), ctx, Plan)
    row = (await conn.execute(stmt)).first()
    if row is None:
        raise NotFound("Plan not found.", details={"id": str(plan_id)})
    body = (await repo.plan_tree(conn, ctx, plan_id)).plan(plan_base(row))
    response = json_response(body)
    response.headers["ETag"] = etag(row.version)
    return response
