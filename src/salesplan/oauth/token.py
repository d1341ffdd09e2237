"""The token endpoint's grants: `authorization_code` (PKCE S256) and `client_credentials`."""

from __future__ import annotations

import base64
import hashlib
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote_plus

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.scopes import parse_scopes
from salesplan.auth.tokens import token_hash
from salesplan.kit.clock import utcnow
from salesplan.models.oauth import OAuthApp
from salesplan.oauth import repository
from salesplan.oauth.access import ACCESS_TOKEN_SECONDS, issue_access_token, revoke_tokens_of_code
from salesplan.oauth.apps import app_by_client_id, secret_matches
from salesplan.oauth.errors import OAuthError

BASIC_CHALLENGE = {"WWW-Authenticate": 'Basic realm="salesplan"'}


@dataclass(frozen=True)
class IssuedToken:
    access_token: str
    scopes: list[str]

    def body(self) -> dict[str, object]:
        return {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": ACCESS_TOKEN_SECONDS,
            "scope": " ".join(self.scopes),
        }


def _invalid_client(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, status=401, headers=BASIC_CHALLENGE)


async def authenticate_client(
    session: AsyncSession, authorization: str | None, form: Mapping[str, str]
) -> OAuthApp:
    """Client authentication by HTTP Basic or by `client_id`/`client_secret` in the body
    (RFC 6749 §2.3.1); public clients (`none`) send only `client_id`."""
    client_id = form.get("client_id")
    secret = form.get("client_secret")
    if authorization and authorization[:6].lower() == "basic ":
        if secret is not None:
            raise OAuthError("invalid_request", "Use one client authentication method, not two.")
        try:
            decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
            basic_id, sep, basic_secret = decoded.partition(":")
        except (ValueError, UnicodeDecodeError):
            raise _invalid_client("Malformed HTTP Basic credentials.") from None
        if not sep:
            raise _invalid_client("Malformed HTTP Basic credentials.")
        basic_id, basic_secret = unquote_plus(basic_id), unquote_plus(basic_secret)
        if client_id is not None and client_id != basic_id:
            raise OAuthError("invalid_request", "client_id differs from the Basic credentials.")
        client_id, secret = basic_id, basic_secret
    if not client_id:
        raise _invalid_client("Client authentication is required.")
    app = await app_by_client_id(session, client_id)
    if app is None:
        raise _invalid_client("Unknown client or wrong secret.")
    if app.token_endpoint_auth_method == "none":
        if secret:
            raise _invalid_client("This public client has no secret.")
        return app
    if not secret or not secret_matches(app, secret):
        raise _invalid_client("Unknown client or wrong secret.")
    return app


def pkce_matches(verifier: str, challenge: str) -> bool:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    computed = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return secrets.compare_digest(computed, challenge)


async def grant_authorization_code(
    session: AsyncSession, app: OAuthApp, form: Mapping[str, str], *, mcp_url: str
) -> IssuedToken:
    code_raw = form.get("code")
    redirect_uri = form.get("redirect_uri")
    verifier = form.get("code_verifier")
    if not code_raw:
        raise OAuthError("invalid_request", "code is required.")
    if not redirect_uri:
        raise OAuthError("invalid_request", "redirect_uri is required.")
    if not verifier:
        raise OAuthError("invalid_request", "code_verifier is required (PKCE).")
    code = await repository.code_by_hash(session, token_hash(code_raw))
    if code is None or code.app_id != app.id:
        raise OAuthError("invalid_grant", "The authorization code is invalid.")
    if code.used_at is not None:
        # RFC 6749 §4.1.2: a replayed code revokes what it already produced.
        await revoke_tokens_of_code(session, code.id)
        raise OAuthError("invalid_grant", "The authorization code was already used.")
    if code.expires_at <= utcnow():
        raise OAuthError("invalid_grant", "The authorization code has expired.")
    if redirect_uri != code.redirect_uri:
        raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request.")
    if not (43 <= len(verifier) <= 128) or not pkce_matches(verifier, code.code_challenge):
        # A wrong verifier burns the code (RFC 9700 §2.1.1): whoever holds a stolen code gets
        # one guess, and the rightful client a fresh authorization.
        await repository.spend_code(session, code.id)
        raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge.")
    resource = form.get("resource")
    if resource is not None and resource != code.resource:
        raise OAuthError("invalid_target", "resource differs from the authorization request.")
    # Spend the code atomically, so that two concurrent redemptions cannot both succeed.
    if not await repository.spend_code(session, code.id):
        await revoke_tokens_of_code(session, code.id)
        raise OAuthError("invalid_grant", "The authorization code was already used.")
    _, raw = await issue_access_token(
        session,
        app_id=app.id,
        scopes=code.scopes,
        organization_ids=[code.organization_id],
        user_id=code.user_id,
        code_id=code.id,
        resource=code.resource,
    )
    return IssuedToken(raw, list(code.scopes))


async def grant_client_credentials(
    session: AsyncSession, app: OAuthApp, form: Mapping[str, str], *, mcp_url: str
) -> IssuedToken:
    if app.token_endpoint_auth_method == "none":
        raise OAuthError("unauthorized_client", "A public client cannot use client_credentials.")
    requested = parse_scopes(form.get("scope"))
    scopes = requested or list(app.scopes)
    outside = [s for s in scopes if s not in app.scopes]
    if outside:
        raise OAuthError("invalid_scope", "Scopes not allowed for this app: " + " ".join(outside))
    resource = form.get("resource")
    if resource is not None and resource != mcp_url:
        raise OAuthError("invalid_target", f"The only protected resource here is {mcp_url}.")
    orgs = [uuid.UUID(str(o)) for o in (app.organization_ids or [])]
    _, raw = await issue_access_token(
        session, app_id=app.id, scopes=scopes, organization_ids=orgs, resource=resource
    )
    return IssuedToken(raw, scopes)
