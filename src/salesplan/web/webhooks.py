"""Developer settings, webhook endpoints (contract §13): an admin of an organization adds,
rotates and deletes its endpoints, the same as the API and `salesplan admin webhooks`. A new
or rotated signing secret is shown once (the flash), never again."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import RedirectResponse, Response

from salesplan.db_dependencies import SessionDep
from salesplan.errors import AppError
from salesplan.kit.scoping import OrgScope, TenantScope
from salesplan.organizations.repository import role_in
from salesplan.web import repository
from salesplan.web.deps import DeveloperPost
from salesplan.web.session import flash as _flash
from salesplan.webhooks import service
from salesplan.webhooks.events import EVENT_TYPES
from salesplan.webhooks.schemas import EndpointIn

router = APIRouter(include_in_schema=False)

PATH = "/settings/developer/webhooks/{organization_id}"
BACK = "/settings/developer#webhooks"


async def webhook_rows(session: AsyncSession, user_id: uuid.UUID) -> list[dict[str, object]]:
    """The organizations the user administers, each with its endpoints."""
    rows = []
    for org_id, name, _hook, _secret in await repository.administered_integrations(
        session, user_id
    ):
        scope: TenantScope = OrgScope(org_id)
        rows.append(
            {"id": org_id, "name": name, "endpoints": await service.all_endpoints(session, scope)}
        )
    return rows


async def _refused(request: Request, session: AsyncSession, user: Any, org: uuid.UUID) -> bool:
    if await role_in(session, user.id, org) == "admin":
        return False
    await _flash(request, session, {"error": "Only an admin of the organization can change this."})
    return True


def _problem(exc: AppError) -> str:
    unknown = exc.details.get("unknown")
    if not isinstance(unknown, list) or not unknown:
        return f"{exc.message}"
    return f"Unknown event types: {', '.join(map(str, unknown))}"


@router.post(PATH)
async def add_webhook_endpoint(
    organization_id: uuid.UUID, request: Request, session: SessionDep, posted: DeveloperPost
) -> Response:
    user, form = posted
    if await _refused(request, session, user, organization_id):
        return RedirectResponse(BACK, status_code=303)
    chosen = [str(t) for t in form.getlist("event_types") if str(t) in EVENT_TYPES]
    try:
        body = EndpointIn.model_validate(
            {
                "url": str(form.get("url") or ""),
                "description": str(form.get("description") or "") or None,
                "eventTypes": chosen,
            }
        )
        endpoint, secret = await service.new_endpoint(
            session, request.app.state.settings, OrgScope(organization_id), body
        )
    except ValidationError:
        return await _back(
            request, session, {"error": "Give an https URL of at most 2048 characters."}
        )
    except AppError as exc:
        return await _back(request, session, {"error": _problem(exc)})
    return await _show_secret(request, session, endpoint.url, secret)


async def _back(request: Request, session: AsyncSession, flash: dict[str, object]) -> Response:
    """Back to the settings page's webhooks section, with `flash` shown once."""
    await _flash(request, session, flash)
    return RedirectResponse(BACK, status_code=303)


async def _show_secret(request: Request, session: AsyncSession, url: str, secret: str) -> Response:
    """Back to the settings page, which shows the new signing secret once."""
    await _flash(request, session, {"kind": "webhook", "url": url, "webhook_secret": secret})
    return RedirectResponse("/settings/developer#webhook-secret", status_code=303)


@router.post(PATH + "/{endpoint_id}/rotate")
async def rotate_webhook_endpoint(
    organization_id: uuid.UUID,
    endpoint_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    posted: DeveloperPost,
) -> Response:
    user, _form = posted
    if await _refused(request, session, user, organization_id):
        return RedirectResponse(BACK, status_code=303)
    try:
        endpoint, secret = await service.new_secret(
            session, request.app.state.settings, OrgScope(organization_id), endpoint_id
        )
    except AppError as exc:
        return await _back(request, session, {"error": _problem(exc)})
    return await _show_secret(request, session, endpoint.url, secret)


@router.post(PATH + "/{endpoint_id}/delete")
async def delete_webhook_endpoint(
    organization_id: uuid.UUID,
    endpoint_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    posted: DeveloperPost,
) -> Response:
    user, _form = posted
    if await _refused(request, session, user, organization_id):
        return RedirectResponse(BACK, status_code=303)
    try:
        await service.remove_endpoint(session, OrgScope(organization_id), endpoint_id)
    except AppError as exc:
        return await _back(request, session, {"error": _problem(exc)})
    return await _back(request, session, {"notice": "Webhook endpoint deleted."})
