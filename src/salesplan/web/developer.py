"""Developer settings (/settings/developer): API keys and OAuth apps of the signed-in user.
Every POST answers 303 back to the page, with a one-time flash (a new secret, a notice, or the
problem and what was typed)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Sequence
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData
from starlette.responses import Response

from salesplan.auth.scopes import APPROVED_SCOPES, SCOPE_DESCRIPTIONS
from salesplan.auth.tokens import create_api_key, expiry_in_days, key_status, revoke_api_key
from salesplan.db_dependencies import SessionDep
from salesplan.errors import AppError, ValidationFailed
from salesplan.models.oauth import OAuthApp
from salesplan.oauth.apps import (
    create_oauth_app,
    delete_oauth_app,
    list_owned_apps,
    regenerate_client_secret,
    update_oauth_app,
)
from salesplan.web import repository
from salesplan.web.deps import DEVELOPER, DeveloperPost, DeveloperUser, scope_groups, see_other
from salesplan.web.integrations import integration_rows
from salesplan.web.pages import render
from salesplan.web.session import flash as _flash
from salesplan.web.session import session_row
from salesplan.web.webhooks import webhook_rows
from salesplan.webhooks.events import EVENT_TYPES

router = APIRouter(include_in_schema=False)

# The expiry choices of a new key: (form value, label); "" is never.
KEY_EXPIRIES = (
    ("", "Never"),
    ("7", "In 7 days"),
    ("30", "In 30 days"),
    ("90", "In 90 days"),
    ("365", "In a year"),
)


def _uuids(values: Sequence[object]) -> list[uuid.UUID]:
    out = []
    for value in values:
        try:
            out.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return out


async def _act(
    request: Request, session: AsyncSession, action: Awaitable[object], notice: str, back: str
) -> Response:
    """Run the action; flash `notice`, or the problem when it is refused; back to the page."""
    try:
        await action
        await _flash(request, session, {"notice": notice})
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
    return see_other(DEVELOPER + back)


async def _app_secret(
    request: Request, session: AsyncSession, app: OAuthApp, secret: str | None, back: str
) -> Response:
    """Back to the page, which shows the app's new client secret once (scrolled to it, not to
    `back`, so that it is on screen)."""
    await _flash(
        request,
        session,
        {"kind": "app", "name": app.name, "client_id": app.client_id, "secret": secret},
    )
    return see_other(DEVELOPER + "#created")


def _lines(text: object) -> list[str]:
    """Redirect URIs, one per line: a line is one value, whatever spaces it holds, so that an
    error quotes all of it."""
    return [line.strip() for line in str(text or "").splitlines() if line.strip()]


def _submitted(form: FormData, which: str) -> dict[str, Any]:
    """What the user typed and ticked, to show the form again as it was after an error
    (names, URLs and choices only: never a secret)."""
    return {
        "form": which,
        "name": str(form.get("name") or "")[:200],
        "description": str(form.get("description") or "")[:500],
        "icon_url": str(form.get("icon_url") or "")[:2000],
        "redirect_uris": str(form.get("redirect_uris") or "")[:10_000],
        "grant_types": [str(g) for g in form.getlist("grant_types")],
        "scopes": [str(s) for s in form.getlist("scopes")],
        "organizations": [str(o) for o in form.getlist("organizations")],
        "expires_in_days": str(form.get("expires_in_days") or "")[:10],
    }


def _days(value: object) -> int | None:
    """The expiry choice of the key form: blank is never; anything else a whole number."""
    text = str(value or "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ValidationFailed.at(["expires_in_days"], "Choose when the key expires.")
    return int(text)


def _problem(exc: AppError) -> str:
    errors = exc.details.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return str(errors[0].get("message", exc.message))
    return exc.message


@router.get(DEVELOPER)
async def developer_settings(
    request: Request, session: SessionDep, user: DeveloperUser
) -> Response:
    row = await session_row(request, session)
    flash = row.flash if row else None
    if row is not None and row.flash is not None:
        row.flash = None  # shown once
    organizations = await repository.member_organizations(session, user.id)
    return render(
        request,
        "developer.html",
        {
            "title": "Developer settings",
            "user": user,
            "flash": flash,
            "organizations": organizations,
            "org_names": {str(org.id): org.name for org in organizations},
            "keys": await repository.api_keys(session, user.id),
            "key_status": key_status,
            "key_expiries": KEY_EXPIRIES,
            "apps": await list_owned_apps(session, user_id=user.id),
            "scopes": [(s, SCOPE_DESCRIPTIONS.get(s, s)) for s in APPROVED_SCOPES],
            "groups": scope_groups(APPROVED_SCOPES),
            "api_base": request.app.state.settings.api_base_url,
            "integrations": await integration_rows(session, user.id),
            "webhooks": await webhook_rows(session, user.id),
            "webhook_event_types": EVENT_TYPES,
            "origin": request.app.state.settings.public_url,
        },
    )


@router.post(DEVELOPER + "/keys")
async def create_key(request: Request, session: SessionDep, post: DeveloperPost) -> Response:
    user, form = post
    scopes = [str(s) for s in form.getlist("scopes")]
    orgs = _uuids(form.getlist("organizations"))
    name = str(form.get("name") or "").strip() or "Untitled key"
    if not scopes:
        await _flash(
            request,
            session,
            {"error": "Choose at least one scope for the key.", "typed": _submitted(form, "key")},
        )
        return see_other(DEVELOPER + "#keys")
    try:
        key, raw = await create_api_key(
            session,
            user_id=user.id,
            name=name[:200],
            scopes=scopes,
            organization_ids=orgs or None,
            expires_at=expiry_in_days(_days(form.get("expires_in_days"))),
        )
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc), "typed": _submitted(form, "key")})
        return see_other(DEVELOPER + "#keys")
    await _flash(request, session, {"kind": "key", "name": key.name, "secret": raw})
    # To the one-time key itself, not the table below it (which shows only its prefix).
    return see_other(DEVELOPER + "#created")


@router.post(DEVELOPER + "/keys/{key_id}/revoke")
async def revoke_key(
    key_id: uuid.UUID, request: Request, session: SessionDep, post: DeveloperPost
) -> Response:
    user, _ = post
    revoking = revoke_api_key(session, user_id=user.id, key_id=key_id)
    return await _act(request, session, revoking, "The key was revoked.", "#keys")


@router.post(DEVELOPER + "/apps")
async def create_app_page(request: Request, session: SessionDep, post: DeveloperPost) -> Response:
    user, form = post
    grants = [str(g) for g in form.getlist("grant_types")]
    try:
        app, secret = await create_oauth_app(
            session,
            owner_user_id=user.id,
            name=str(form.get("name") or ""),
            description=str(form.get("description") or ""),
            icon_url=str(form.get("icon_url") or "").strip() or None,
            scopes=[str(s) for s in form.getlist("scopes")] or None,
            organization_ids=_uuids(form.getlist("organizations")) or None,
            redirect_uris=_lines(form.get("redirect_uris")),
            grant_types=grants or None,
        )
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc), "typed": _submitted(form, "app")})
        return see_other(DEVELOPER + "#apps")
    return await _app_secret(request, session, app, secret, "#apps")


@router.post(DEVELOPER + "/apps/{app_id}")
async def update_app_page(
    app_id: uuid.UUID, request: Request, session: SessionDep, post: DeveloperPost
) -> Response:
    user, form = post
    saving = update_oauth_app(
        session,
        user_id=user.id,
        app_id=app_id,
        redirect_uris=_lines(form.get("redirect_uris")),
        scopes=[str(s) for s in form.getlist("scopes")],
        organization_ids=_uuids(form.getlist("organizations")),
    )
    return await _act(request, session, saving, "The app was saved.", f"#app-{app_id}")


@router.post(DEVELOPER + "/apps/{app_id}/secret")
async def regenerate_secret_page(
    app_id: uuid.UUID, request: Request, session: SessionDep, post: DeveloperPost
) -> Response:
    user, _ = post
    try:
        app, secret = await regenerate_client_secret(session, user_id=user.id, app_id=app_id)
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
        return see_other(DEVELOPER + "#apps")
    return await _app_secret(request, session, app, secret, f"#app-{app_id}")


@router.post(DEVELOPER + "/apps/{app_id}/delete")
async def delete_app_page(
    app_id: uuid.UUID, request: Request, session: SessionDep, post: DeveloperPost
) -> Response:
    user, _ = post
    deleting = delete_oauth_app(session, user_id=user.id, app_id=app_id)
    return await _act(request, session, deleting, "The app was deleted.", "#apps")
