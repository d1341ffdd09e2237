"""The seller's side of a plan's room on the web pages (contract §16), read-only: GET
/plan-rooms/{planId} shows, to a signed-in member of the plan's organization, the plan's
shares, each buyer's engagement and the latest activity. Anyone else gets the same 404 as for
an unknown id. (The digest e-mails link here.)"""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from starlette.responses import Response

from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep
from salesplan.rooms import access, activity
from salesplan.rooms import activity_repository as repo
from salesplan.web.deps import SignedInUser
from salesplan.web.pages import render

router = APIRouter(include_in_schema=False)

SHOWN = 100


@router.get("/plan-rooms/{plan_id}")
async def plan_room_page(
    request: Request, plan_id: str, session: SessionDep, user: SignedInUser
) -> Response:
    try:
        found = await repo.member_plan(session, user.id, uuid.UUID(plan_id))
    except ValueError:
        found = None
    if found is None:
        context = {"title": "Plan not found", "user": user, "missing": True}
        return render(request, "plan_room.html", context, status=404)
    organization_id, name = found
    ctx = RequestContext.internal(organization_id, user.id)
    plan = uuid.UUID(plan_id)
    engagement = await activity.engagement(session, ctx, plan)
    names = {e.contact_id: e.name for e in engagement}
    shares = [
        (share, access.share_status(share), names.get(share.contact_id, ""))
        for share in await repo.shares_of(session, ctx, plan, SHOWN)
    ]
    latest = [
        (row, names.get(row.contact_id, "") if row.contact_id else "")
        for row in await repo.latest_activity(session, ctx, plan, SHOWN)
    ]
    return render(
        request,
        "plan_room.html",
        {
            "title": f"{name}: buyer room",
            "user": user,
            "plan_name": name,
            "shares": shares,
            "engagement": engagement,
            "latest": latest,
        },
    )
