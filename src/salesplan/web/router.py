"""Pages at the origin: /login, /logout, /oauth/consent, /settings/developer. Every form carries a
CSRF token; every POST answers 303 (or re-renders the form with the problem)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse, Response

from salesplan.auth.passwords import verify_password
from salesplan.auth.scopes import APPROVED_SCOPES, SCOPE_DESCRIPTIONS
from salesplan.auth.tokens import create_api_key, revoke_api_key
from salesplan.db import SessionDep
from salesplan.errors import AppError, RateLimited
from salesplan.models.identity import ApiKey, Membership, Organization, User
from salesplan.oauth.apps import (
    create_oauth_app,
    delete_oauth_app,
    list_owned_apps,
    regenerate_client_secret,
    update_oauth_app,
)
from salesplan.oauth.authorize import (
    AuthorizationRequest,
    AuthorizePageError,
    AuthorizeRedirectError,
    consent_organizations,
    create_authorization_code,
    validate_authorization_request,
    with_query,
)
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.web.integrations import integration_rows
from salesplan.web.pages import error_page, render
from salesplan.web.session import (
    csrf_valid,
    current_user,
    end_session,
    session_row,
    start_session,
)

router = APIRouter(include_in_schema=False)

DEVELOPER = "/settings/developer"


def see_other(location: str) -> RedirectResponse:
    return RedirectResponse(location, status_code=303)


def safe_next(value: object) -> str:
    """Only a path on this site: never an open redirect."""
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//"):
        return DEVELOPER
    if "\\" in value or urlsplit(value).netloc:
        return DEVELOPER
    return value


def scope_groups(scopes: Sequence[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Scopes grouped by the resource they reach, in the approved list's order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for scope in APPROVED_SCOPES:
        if scope in scopes:
            resource = scope.split(":", 1)[0].replace("_", " ").capitalize()
            groups.setdefault(resource, []).append((scope, SCOPE_DESCRIPTIONS.get(scope, scope)))
    return list(groups.items())


async def _org_names(session: AsyncSession, ids: Sequence[uuid.UUID]) -> list[Organization]:
    if not ids:
        return []
    rows = await session.execute(
        select(Organization).where(Organization.id.in_(list(ids))).order_by(Organization.name)
    )
    return list(rows.scalars())


# ---------------------------------------------------------------- sign-in


@router.get("/")
async def home(request: Request) -> Response:
    return see_other(DEVELOPER)


@router.get("/login")
async def login_form(request: Request, session: SessionDep) -> Response:
    next_path = safe_next(request.query_params.get("next"))
    if await current_user(request, session) is not None:
        return see_other(next_path)
    return render(request, "login.html", {"title": "Sign in", "next": next_path, "email": ""})


@router.post("/login")
async def login(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    next_path = safe_next(form.get("next"))
    email = str(form.get("email") or "").strip().lower()
    context = {"title": "Sign in", "next": next_path, "email": email}
    limiter: RateLimiter = request.app.state.rate_limiter
    try:
        await limiter.consume_ip(request.client.host if request.client else "unknown", "login")
    except RateLimited as exc:
        return render(
            request,
            "login.html",
            context | {"error": "Too many sign-in attempts. Wait a minute and try again."},
            status=429,
            headers={"Retry-After": exc.headers.get("Retry-After", "60")},
        )
    if not csrf_valid(request, form.get("csrf_token")):
        return render(
            request,
            "login.html",
            context | {"error": "Your form expired. Please try again."},
            status=400,
        )
    user = (
        (await session.execute(select(User).where(User.email == email))).scalar_one_or_none()
        if email
        else None
    )
    password = str(form.get("password") or "")
    if not verify_password(user.password_hash if user else None, password) or user is None:
        return render(
            request,
            "login.html",
            context | {"error": "The e-mail or password is not right."},
            status=401,
        )
    response = see_other(next_path)
    await start_session(session, response, request, user.id)
    return response


@router.get("/logout")
async def logout_form(request: Request, session: SessionDep) -> Response:
    user = await current_user(request, session)
    if user is None:
        return see_other("/login")
    return render(request, "logout.html", {"title": "Sign out", "user": user})


@router.post("/logout")
async def logout(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    if not csrf_valid(request, form.get("csrf_token")):
        return error_page(request, "Form expired", "Please go back and try again.")
    response = see_other("/login")
    await end_session(session, response, request)
    return response


# ---------------------------------------------------------------- consent


async def consent_page(
    request: Request,
    session: AsyncSession,
    auth_request: AuthorizationRequest,
    user: User,
    *,
    error: str | None = None,
) -> Response:
    org_ids = await consent_organizations(session, auth_request.app, user.id)
    if not org_ids:
        denied = auth_request.deny(
            "access_denied", "You are not a member of an organization this app may reach."
        )
        return RedirectResponse(denied.location(), status_code=302)
    return render(
        request,
        "consent.html",
        {
            "title": f"Authorize {auth_request.app.name}",
            "user": user,
            "app": auth_request.app,
            "params": auth_request.params(),
            "organizations": await _org_names(session, org_ids),
            "groups": scope_groups(auth_request.scopes),
            "redirect_host": urlsplit(auth_request.redirect_uri).netloc
            or auth_request.redirect_uri,
            "resource": auth_request.resource,
            "error": error,
        },
    )


@router.post("/oauth/consent")
async def consent(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    params = {
        name: [v for v in form.getlist(name) if isinstance(v, str)]
        for name in form
        if name not in ("csrf_token", "decision", "organization_id")
    }
    try:
        auth_request = await validate_authorization_request(
            session, params, mcp_url=request.app.state.settings.mcp_url
        )
    except AuthorizePageError as exc:
        return error_page(request, exc.title, exc.message)
    except AuthorizeRedirectError as exc:
        return see_other(exc.location())
    user = await current_user(request, session)
    if user is None:
        return error_page(request, "Signed out", "Your session ended. Start again from the app.")
    if not csrf_valid(request, form.get("csrf_token")):
        return await consent_page(
            request, session, auth_request, user, error="The form expired; please choose again."
        )
    if form.get("decision") != "allow":
        return see_other(
            auth_request.deny("access_denied", "The user declined the request.").location()
        )
    allowed = await consent_organizations(session, auth_request.app, user.id)
    chosen = str(form.get("organization_id") or "")
    organization_id = next((o for o in allowed if str(o) == chosen), None)
    if organization_id is None:
        if len(allowed) == 1 and not chosen:
            organization_id = allowed[0]
        else:
            return await consent_page(
                request, session, auth_request, user, error="Choose an organization."
            )
    code = await create_authorization_code(
        session, auth_request, user_id=user.id, organization_id=organization_id
    )
    params_out = {"code": code}
    if auth_request.state is not None:
        params_out["state"] = auth_request.state
    return see_other(with_query(auth_request.redirect_uri, params_out))


# ---------------------------------------------------------------- developer settings


def _uuids(values: Sequence[object]) -> list[uuid.UUID]:
    out = []
    for value in values:
        try:
            out.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return out


async def _signed_in(request: Request, session: AsyncSession) -> User | None:
    return await current_user(request, session)


def _to_login(request: Request) -> Response:
    return see_other("/login?next=" + DEVELOPER)


async def _flash(request: Request, session: AsyncSession, data: dict[str, Any]) -> None:
    row = await session_row(request, session)
    if row is not None:
        row.flash = data


@router.get(DEVELOPER)
async def developer_settings(request: Request, session: SessionDep) -> Response:
    user = await _signed_in(request, session)
    if user is None:
        return _to_login(request)
    row = await session_row(request, session)
    flash = row.flash if row else None
    if row is not None and row.flash is not None:
        row.flash = None  # shown once
    memberships = (
        await session.execute(
            select(Organization, Membership.role)
            .join(Membership, Membership.organization_id == Organization.id)
            .where(Membership.user_id == user.id)
            .order_by(Organization.name)
        )
    ).all()
    org_names = {str(org.id): org.name for org, _ in memberships}
    keys = (
        await session.execute(
            select(ApiKey).where(ApiKey.user_id == user.id).order_by(ApiKey.created_at.desc())
        )
    ).scalars()
    return render(
        request,
        "developer.html",
        {
            "title": "Developer settings",
            "user": user,
            "flash": flash,
            "organizations": [org for org, _ in memberships],
            "org_names": org_names,
            "keys": list(keys),
            "apps": await list_owned_apps(session, user_id=user.id),
            "scopes": [(s, SCOPE_DESCRIPTIONS.get(s, s)) for s in APPROVED_SCOPES],
            "groups": scope_groups(APPROVED_SCOPES),
            "api_base": request.app.state.settings.api_base_url,
            "integrations": await integration_rows(session, user.id),
            "origin": request.app.state.settings.public_url,
        },
    )


async def _developer_post(request: Request, session: AsyncSession) -> tuple[User | None, FormData]:
    form = await request.form()
    user = await _signed_in(request, session)
    if user is None or not csrf_valid(request, form.get("csrf_token")):
        return None, form
    return user, form


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
    }


def _problem(exc: AppError) -> str:
    errors = exc.details.get("errors") if isinstance(exc.details, dict) else None
    if errors:
        return str(errors[0].get("message", exc.message))
    return exc.message


@router.post(DEVELOPER + "/keys")
async def create_key(request: Request, session: SessionDep) -> Response:
    user, form = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
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
        )
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc), "typed": _submitted(form, "key")})
        return see_other(DEVELOPER + "#keys")
    await _flash(request, session, {"kind": "key", "name": key.name, "secret": raw})
    return see_other(DEVELOPER + "#keys")


@router.post(DEVELOPER + "/keys/{key_id}/revoke")
async def revoke_key(key_id: uuid.UUID, request: Request, session: SessionDep) -> Response:
    user, _ = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
    try:
        await revoke_api_key(session, user_id=user.id, key_id=key_id)
        await _flash(request, session, {"notice": "The key was revoked."})
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
    return see_other(DEVELOPER + "#keys")


@router.post(DEVELOPER + "/apps")
async def create_app_page(request: Request, session: SessionDep) -> Response:
    user, form = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
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
    await _flash(
        request,
        session,
        {"kind": "app", "name": app.name, "client_id": app.client_id, "secret": secret},
    )
    return see_other(DEVELOPER + "#apps")


@router.post(DEVELOPER + "/apps/{app_id}")
async def update_app_page(app_id: uuid.UUID, request: Request, session: SessionDep) -> Response:
    user, form = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
    try:
        await update_oauth_app(
            session,
            user_id=user.id,
            app_id=app_id,
            redirect_uris=_lines(form.get("redirect_uris")),
            scopes=[str(s) for s in form.getlist("scopes")],
            organization_ids=_uuids(form.getlist("organizations")),
        )
        await _flash(request, session, {"notice": "The app was saved."})
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
    return see_other(DEVELOPER + f"#app-{app_id}")


@router.post(DEVELOPER + "/apps/{app_id}/secret")
async def regenerate_secret_page(
    app_id: uuid.UUID, request: Request, session: SessionDep
) -> Response:
    user, _ = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
    try:
        app, secret = await regenerate_client_secret(session, user_id=user.id, app_id=app_id)
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
        return see_other(DEVELOPER + "#apps")
    await _flash(
        request,
        session,
        {"kind": "app", "name": app.name, "client_id": app.client_id, "secret": secret},
    )
    return see_other(DEVELOPER + f"#app-{app_id}")


@router.post(DEVELOPER + "/apps/{app_id}/delete")
async def delete_app_page(app_id: uuid.UUID, request: Request, session: SessionDep) -> Response:
    user, _ = await _developer_post(request, session)
    if user is None:
        return _to_login(request)
    try:
        await delete_oauth_app(session, user_id=user.id, app_id=app_id)
        await _flash(request, session, {"notice": "The app was deleted."})
    except AppError as exc:
        await _flash(request, session, {"error": _problem(exc)})
    return see_other(DEVELOPER + "#apps")
