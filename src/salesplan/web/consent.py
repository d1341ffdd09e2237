"""The OAuth consent page: GET is /api/v1/oauth/authorize (oauth/router.py), which renders
`consent_page`; the POST of its form lands here."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import RedirectResponse, Response

from salesplan.db_dependencies import SessionDep
from salesplan.models.identity import User
from salesplan.oauth.apps import is_url_client_id
from salesplan.oauth.authorize import (
    AuthorizationRequest,
    AuthorizePageError,
    AuthorizeRedirectError,
    consent_organizations,
    create_authorization_code,
    validate_authorization_request,
    with_query,
)
from salesplan.oauth.client_metadata import request_metadata
from salesplan.web import repository
from salesplan.web.deps import scope_groups, see_other
from salesplan.web.pages import error_page, render
from salesplan.web.session import csrf_valid, current_user

router = APIRouter(include_in_schema=False)

# The consent form's checkboxes: one per requested scope, ticked; the person may untick any.
GRANTED = "granted_scope"


async def authorize_page(request: Request, session: AsyncSession) -> Response:
    """GET /api/v1/oauth/authorize (oauth/router.py): the checked request, then sign in, then
    the consent page."""
    params = {name: request.query_params.getlist(name) for name in request.query_params}
    auth_request = await checked_request(request, session, params, _found)
    if isinstance(auth_request, Response):
        return auth_request
    user = await current_user(request, session)
    if user is None:
        here = request.url.path + ("?" + request.url.query if request.url.query else "")
        return RedirectResponse("/login?" + urlencode({"next": here}), status_code=302)
    return await consent_page(request, session, auth_request, user)


def _found(location: str) -> Response:
    return RedirectResponse(location, status_code=302)


async def checked_request(
    request: Request,
    session: AsyncSession,
    params: dict[str, list[str]],
    redirect: Callable[[str], Response],
) -> AuthorizationRequest | Response:
    """The authorization request the parameters make, or what to answer instead: an error page
    when the client cannot be told, else a redirect to the client with the error."""
    try:
        return await validate_authorization_request(
            session,
            params,
            mcp_url=request.app.state.settings.mcp_url,
            client_metadata=request_metadata(request),
        )
    except AuthorizePageError as exc:
        return error_page(request, exc.title, exc.message)
    except AuthorizeRedirectError as exc:
        return redirect(exc.location(request.app.state.settings.public_url))


async def consent_page(
    request: Request,
    session: AsyncSession,
    auth_request: AuthorizationRequest,
    user: User,
    *,
    error: str | None = None,
    granted: list[str] | None = None,
) -> Response:
    org_ids = await consent_organizations(session, auth_request.app, user.id)
    if not org_ids:
        denied = auth_request.deny(
            "access_denied", "You are not a member of an organization this app may reach."
        )
        return RedirectResponse(
            denied.location(request.app.state.settings.public_url), status_code=302
        )
    return render(
        request,
        "consent.html",
        {
            "title": f"Authorize {auth_request.app.name}",
            "user": user,
            "app": auth_request.app,
            "params": auth_request.params(),
            "organizations": await repository.organizations_by_name(session, org_ids),
            "groups": scope_groups(auth_request.scopes),
            "granted": auth_request.scopes if granted is None else granted,
            "redirect_host": urlsplit(auth_request.redirect_uri).netloc
            or auth_request.redirect_uri,
            "resource": auth_request.resource,
            # A client identified by its metadata document: where that document is, so that
            # the person sees who vouches for the name shown.
            "client_url": auth_request.client_id
            if auth_request.client_id and is_url_client_id(auth_request.client_id)
            else None,
            "error": error,
        },
    )


@router.post("/oauth/consent")
async def consent(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    params = {
        name: [v for v in form.getlist(name) if isinstance(v, str)]
        for name in form
        if name not in ("csrf_token", "decision", "organization_id", GRANTED)
    }
    auth_request = await checked_request(request, session, params, see_other)
    if isinstance(auth_request, Response):
        return auth_request
    # Not the signed-in dependency: a broken request is reported before a missing session, and
    # a lost session here is an error page (the app started the flow), not a sign-in form.
    user = await current_user(request, session)
    if user is None:
        return error_page(request, "Signed out", "Your session ended. Start again from the app.")
    if not csrf_valid(request, form.get("csrf_token")):
        return await consent_page(
            request, session, auth_request, user, error="The form expired; please choose again."
        )
    if form.get("decision") != "allow":
        return see_other(
            auth_request.deny("access_denied", "The user declined the request.").location(
                request.app.state.settings.public_url
            )
        )
    # Only requested scopes can be granted: a forged box adds nothing (contract §15).
    ticked = {v for v in form.getlist(GRANTED) if isinstance(v, str)}
    granted = [s for s in auth_request.scopes if s in ticked]
    if not granted:
        return await consent_page(
            request,
            session,
            auth_request,
            user,
            error="Tick at least one permission to allow, or press Cancel.",
            granted=[],
        )
    allowed = await consent_organizations(session, auth_request.app, user.id)
    chosen = str(form.get("organization_id") or "")
    organization_id = next((o for o in allowed if str(o) == chosen), None)
    if organization_id is None:
        if len(allowed) == 1 and not chosen:
            organization_id = allowed[0]
        else:
            return await consent_page(
                request,
                session,
                auth_request,
                user,
                error="Choose an organization.",
                granted=granted,
            )
    code = await create_authorization_code(
        session, auth_request, user_id=user.id, organization_id=organization_id, scopes=granted
    )
    params_out = {"code": code}
    if auth_request.state is not None:
        params_out["state"] = auth_request.state
    params_out["iss"] = request.app.state.settings.public_url  # RFC 9207
    return see_other(with_query(auth_request.redirect_uri, params_out))
