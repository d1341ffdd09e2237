"""`{base_url}/oauth/register`, `/oauth/authorize`, `/oauth/token`. Public endpoints: errors in
RFC 6749 shape, per-IP limits on registration and token (a 429 there is RFC-shaped too)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse, Response

from salesplan.auth.dependencies import limit_by_ip, public
from salesplan.auth.scopes import APPROVED_SCOPES, parse_scopes, unknown_scopes
from salesplan.db_dependencies import SessionDep
from salesplan.errors import RateLimited
from salesplan.kit.clock import utcnow
from salesplan.kit.responses import json_response
from salesplan.oauth.apps import (
    AUTH_METHODS,
    GRANT_TYPES,
    redirect_uri_problem,
    register_dynamic_app,
)
from salesplan.oauth.errors import NO_STORE, OAuthError
from salesplan.oauth.token import (
    authenticate_client,
    grant_authorization_code,
    grant_client_credentials,
)

router = APIRouter(tags=["oauth"])

# GET /authorize renders the sign-in redirect or the consent page of the web layer.
AuthorizePage = Callable[[Request, AsyncSession], Awaitable[Response]]


def _rate_limited(exc: RateLimited) -> OAuthError:
    """The per-IP 429 in the OAuth error shape (`{"error", "error_description"}` + Retry-After)."""
    return OAuthError("rate_limit_exceeded", exc.message, status=429, headers=exc.headers)


def _metadata_error(description: str) -> OAuthError:
    return OAuthError("invalid_client_metadata", description)


def _string_list(body: Mapping[str, object], name: str, default: list[str]) -> list[str]:
    value = body.get(name, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _metadata_error(f"{name} must be an array of strings.")
    return list(dict.fromkeys(value))


def _optional_https(body: Mapping[str, object], name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith("https://"):
        raise _metadata_error(f"{name} must be an https URL.")
    return value


@router.post(
    "/register",
    status_code=201,
    operation_id="registerOAuthClient",
    openapi_extra=public(),
    dependencies=[limit_by_ip("oauth_register", _rate_limited)],
)
async def register_client(request: Request, session: SessionDep) -> Response:
    """Register an OAuth client (RFC 7591 dynamic client registration)."""
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        raise _metadata_error("The body must be a JSON object.") from None
    if not isinstance(body, dict):
        raise _metadata_error("The body must be a JSON object.")

    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty array.")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise OAuthError("invalid_redirect_uri", problem)
    # Real MCP clients always ask for refresh_token too: accepted and dropped, since no refresh
    # tokens are issued (RFC 7591 §3.2.1 lets the server answer the grants it registered).
    requested = _string_list(body, "grant_types", ["authorization_code"])
    if "authorization_code" not in requested or set(requested) - {
        "authorization_code",
        "refresh_token",
    }:
        raise _metadata_error(
            "Dynamic registration accepts grant_types [authorization_code] "
            "(refresh_token is accepted and ignored)."
        )
    grant_types = ["authorization_code"]
    response_types = _string_list(body, "response_types", ["code"])
    if response_types != ["code"]:
        raise _metadata_error("Only response_types [code] is supported.")
    method = body.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise _metadata_error(
            "token_endpoint_auth_method must be one of: " + ", ".join(AUTH_METHODS)
        )
    name = body.get("client_name", "Unnamed client")
    if not isinstance(name, str) or not name.strip():
        raise _metadata_error("client_name must be a non-empty string.")
    scope = body.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise _metadata_error("scope must be a space-separated string.")
    scopes = parse_scopes(scope) or list(APPROVED_SCOPES)
    unknown = unknown_scopes(scopes)
    if unknown:
        raise _metadata_error("Unknown scopes: " + " ".join(unknown))
    logo_uri = _optional_https(body, "logo_uri")
    client_uri = _optional_https(body, "client_uri")

    app, secret = await register_dynamic_app(
        session,
        name=name,
        icon_url=logo_uri,
        client_uri=client_uri,
        redirect_uris=uris,
        scopes=scopes,
        grant_types=grant_types,
        auth_method=method,
    )
    out: dict[str, Any] = {
        "client_id": app.client_id,
        "client_id_issued_at": int(utcnow().timestamp()),
        "client_name": app.name,
        "redirect_uris": app.redirect_uris,
        "grant_types": app.grant_types,
        "response_types": response_types,
        "token_endpoint_auth_method": method,
        "scope": " ".join(scopes),
    }
    if logo_uri:
        out["logo_uri"] = logo_uri
    if client_uri:
        out["client_uri"] = client_uri
    if secret:
        out["client_secret"] = secret
        out["client_secret_expires_at"] = 0
    return json_response(out, 201, NO_STORE)


@router.get(
    "/authorize",
    operation_id="authorizeOAuthClient",
    openapi_extra=public(),
    response_class=HTMLResponse,
)
async def authorize(request: Request, session: SessionDep) -> Response:
    """Start the authorization code flow (PKCE S256): sign in, then consent."""
    # The page is the web layer's (`web.consent.authorize_page`), handed over by `create_app`.
    page: AuthorizePage = request.app.state.authorize_page
    return await page(request, session)


def _form_fields(form: FormData) -> dict[str, str]:
    fields: dict[str, str] = {}
    for name in form:
        values = form.getlist(name)
        if len(values) > 1:
            raise OAuthError("invalid_request", f"Repeated parameter: {name}.")
        if not isinstance(values[0], str):
            raise OAuthError("invalid_request", f"{name} must be a plain form field.")
        fields[name] = values[0]
    return fields


@router.post(
    "/token",
    operation_id="issueOAuthToken",
    openapi_extra=public(),
    dependencies=[limit_by_ip("oauth_token", _rate_limited)],
)
async def issue_token(request: Request, session: SessionDep) -> Response:
    """Exchange an authorization code, or client credentials, for an access token."""
    mcp_url = request.app.state.settings.mcp_url
    try:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise OAuthError(
                "invalid_request", "The body must be application/x-www-form-urlencoded."
            )
        form = _form_fields(await request.form())
        grant_type = form.get("grant_type")
        if not grant_type:
            raise OAuthError("invalid_request", "grant_type is required.")
        if grant_type not in GRANT_TYPES:
            raise OAuthError("unsupported_grant_type", f"grant_type {grant_type} is not supported.")
        app = await authenticate_client(session, request.headers.get("authorization"), form)
        if grant_type not in app.grant_types:
            raise OAuthError("unauthorized_client", f"This client may not use {grant_type}.")
        if grant_type == "authorization_code":
            issued = await grant_authorization_code(session, app, form, mcp_url=mcp_url)
        else:
            issued = await grant_client_credentials(session, app, form, mcp_url=mcp_url)
    except OAuthError as exc:
        # Answered rather than raised, so that the session still commits what an error implies:
        # a replayed code's tokens are revoked.
        return exc.response()
    return json_response(issued.body(), headers=NO_STORE)
