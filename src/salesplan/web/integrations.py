"""Developer settings, organization integrations (contract §11 "Organization integrations"): an
admin of an organization sets its Slack webhook URL and Slack signing secret, the same fields as
`salesplan admin set-integration`. Secrets are stored encrypted (they must be readable to sign
and verify) and never shown back: the page says only whether each is set."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import RedirectResponse, Response

from salesplan.db_dependencies import SessionDep
from salesplan.engage.delivery.integrations import set_integration
from salesplan.errors import Unprocessable, ValidationFailed
from salesplan.feed.domains import parse_own_domains
from salesplan.feed.service import explicit_own_domains, set_own_domains
from salesplan.organizations.repository import role_in
from salesplan.web import repository
from salesplan.web.deps import DeveloperPost
from salesplan.web.session import flash as _flash

router = APIRouter(include_in_schema=False)

PATH = "/settings/developer/integrations/{organization_id}"
BACK = "/settings/developer#integrations"
MAX_FIELD = 2000


async def integration_rows(session: AsyncSession, user_id: uuid.UUID) -> list[dict[str, Any]]:
    """The organizations the user administers, with which integration fields are set."""
    rows = await repository.administered_integrations(session, user_id)
    return [
        {
            "id": org_id,
            "name": name,
            "webhook_set": hook,
            "secret_set": secret,
            "own_domains": ", ".join(await explicit_own_domains(session, org_id)),
        }
        for org_id, name, hook, secret in rows
    ]


@router.post(PATH)
async def save_integration(
    organization_id: uuid.UUID, request: Request, session: SessionDep, posted: DeveloperPost
) -> Response:
    user, form = posted
    if await role_in(session, user.id, organization_id) != "admin":
        await _flash(
            request, session, {"error": "Only an admin of the organization can change this."}
        )
        return RedirectResponse(BACK, status_code=303)
    webhook = str(form.get("slack_webhook_url") or "").strip()
    secret = str(form.get("slack_signing_secret") or "").strip()
    if len(webhook) > MAX_FIELD or len(secret) > MAX_FIELD:
        await _flash(request, session, {"error": "A value is too long."})
        return RedirectResponse(BACK, status_code=303)
    if webhook and not webhook.startswith(("https://", "http://")):
        await _flash(request, session, {"error": "The Slack webhook URL must be a web address."})
        return RedirectResponse(BACK, status_code=303)
    # An empty field keeps the stored value (it is never shown); "clear" removes it.
    new_webhook = "" if form.get("clear_slack_webhook_url") else (webhook or None)
    new_secret = "" if form.get("clear_slack_signing_secret") else (secret or None)
    try:
        await set_integration(
            session,
            request.app.state.settings,
            organization_id,
            slack_webhook_url=new_webhook,
            slack_signing_secret=new_secret,
        )
    except Unprocessable as exc:  # e.g. a destination not allowed (contract §12)
        await _flash(request, session, {"error": exc.message})
        return RedirectResponse(BACK, status_code=303)
    await _flash(request, session, {"notice": "Slack settings saved."})
    return RedirectResponse(BACK, status_code=303)


@router.post(PATH + "/own-domains")
async def save_own_domains(
    organization_id: uuid.UUID, request: Request, session: SessionDep, posted: DeveloperPost
) -> Response:
    """The organization's own e-mail domains for the feed (contract §12), the same list as
    `salesplan admin set-integration --own-domains`; empty goes back to its users' domains."""
    user, form = posted
    if await role_in(session, user.id, organization_id) != "admin":
        await _flash(
            request, session, {"error": "Only an admin of the organization can change this."}
        )
        return RedirectResponse(BACK, status_code=303)
    text = str(form.get("own_domains") or "")
    try:
        if len(text) > MAX_FIELD * 10:  # 100 domains of up to 200 characters
            raise ValidationFailed("A value is too long.")
        domains = parse_own_domains(text)
    except ValidationFailed as exc:
        await _flash(request, session, {"error": exc.message})
        return RedirectResponse(BACK, status_code=303)
    await set_own_domains(session, organization_id, domains)
    await _flash(request, session, {"notice": "Own domains saved."})
    return RedirectResponse(BACK, status_code=303)
