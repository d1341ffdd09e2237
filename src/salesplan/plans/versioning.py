"""The plan version: one counter per plan that every write to the plan or to its milestones,
goals and tasks bumps, in the same transaction (getPlan's ETag, see `etag`).

Said explicitly by the code that writes: a write says `PlanUpdated` or `PlanDeleted` (the
repository's bulk writes `PlanChanged` for every plan owning a row they match), on the ORM
path and the driver path alike, and the unit of work bumps the announced plans just before
COMMIT (`changes.bump_versions`; a new plan starts at 1). updatePlanTask's one statement runs
the same bump as one of its CTEs.

Where the bump comes inside the transaction does not matter to anyone else: other readers see
the transaction's writes and its bump at once, at COMMIT. So a reader that sees the new version
(one statement) then reads the children (later statements) sees the writes too, and a version
never labels an older body than its own."""

from __future__ import annotations

import operator
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from salesplan.errors import NotFound
from salesplan.kit.responses import json_bytes, tag_matches
from salesplan.kit.scoping import TenantScope
from salesplan.kit.stamped_cache import StampedCache
from salesplan.plans import repository as repo
from salesplan.plans.render import plan_base

# --- the ETag ----------------------------------------------------------------------------------

# Bump when the rendering of a plan changes (a new field, a new format): the same version then
# names a different body, so it must be a different tag.
RENDERING = "1"


def etag(version: int) -> str:
    """Strong: getPlan has no query parameter and its body does not depend on who reads it,
    so the version (and the rendering) determine the body byte for byte."""
    return f'"{version}.{RENDERING}"'


# The plan's version in the caller's organization (None: not found there).
plan_version = repo.plan_version


# --- the rendered bodies -----------------------------------------------------------------------


class PlanBodies(StampedCache[uuid.UUID, int, bytes]):
    """getPlan bodies of this process, serialized, by (plan id, version): least recently used
    first out past `max_bytes`, and one version a plan (a newer one replaces the older).

    Exact because of the version: every write to a plan or its children bumps it in its own
    transaction (visible with the write, at its COMMIT), and an entry is stored only when the plan's version was the same before and
    after its children were read, so the body stored under a version is the body of that
    version. Other processes need no message: they look the version up on every read (the one
    indexed statement getPlan runs anyway) and miss on a newer one. Ids are never reused
    (uuid7), so a (plan id, version) pair names one body for the database's whole life."""

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        # a slower reader of an older version keeps the newer body
        super().__init__(max_bytes, supersedes=operator.gt)


def plan_bodies(app: Any) -> PlanBodies:
    """The app's cache of getPlan bodies (one per app, so one per worker process)."""
    bodies: PlanBodies | None = getattr(app.state, "plan_bodies", None)
    if bodies is None:
        bodies = app.state.plan_bodies = PlanBodies()
    return bodies


async def get_plan(
    conn: AsyncConnection,
    ctx: TenantScope,
    plan_id: uuid.UUID,
    if_none_match: str | None,
    bodies: PlanBodies,
) -> Response:
    """getPlan with revalidation and the cached body. The plan's row with its version first
    (one indexed statement): a 304 without a body when If-None-Match names the current tag,
    else the body of that version from `bodies`. On a miss the children are read and the
    body rendered; it is kept only if the version did not move meanwhile (a write committed
    between the statements may show in the children). Either way the tag is the version read
    first, so it never names a body older than the one sent."""
    row = await repo.plan_row_with_version(conn, ctx, plan_id)
    if row is None:
        raise NotFound("Plan not found.", details={"id": str(plan_id)})
    version = row.version
    tag = etag(version)
    if tag_matches(if_none_match, tag):
        return Response(status_code=304, headers={"ETag": tag})
    body = bodies.get(plan_id, version)
    if body is None:
        body = json_bytes((await repo.plan_tree(conn, ctx, plan_id)).plan(plan_base(row)))
        if await repo.plan_version(conn, ctx, plan_id) == version:
            bodies.put(plan_id, version, body)
    return Response(body, media_type="application/json", headers={"ETag": tag})
