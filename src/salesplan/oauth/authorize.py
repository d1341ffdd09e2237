"""The authorization request (`GET {base_url}/oauth/authorize`): every parameter rule of the spec's
table, and the authorization codes that consent produces.

Errors found before the client and its redirect URI are trusted are shown on a page
(`AuthorizePageError`), never redirected; after that they go back to the client with `error` and
`state` (`AuthorizeRedirectError`)."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode, urlsplit, urlunsplit

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.repository import user_organizations
from salesplan.auth.scopes import parse_scopes
from salesplan.auth.tokens import token_hash
from salesplan.kit.clock import utcnow
from salesplan.models.oauth import OAuthApp, OAuthCode
from salesplan.oauth.apps import app_by_client_id, is_url_client_id
from salesplan.oauth.client_metadata import ClientMetadataError, MetadataSource, app_for_document

CODE_PREFIX = "sp_ac_"
CODE_SECONDS = 600
# RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters; verifiers are 43..128.
_CHALLENGE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
AUTHORIZE_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "code_challenge",
    "code_challenge_method",
    "resource",
    "state",
)


class AuthorizePageError(Exception):
    """Shown to the user; the client cannot be trusted with a redirect."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title
        self.message = message


class AuthorizeRedirectError(Exception):
    def __init__(self, redirect_uri: str, error: str, description: str, state: str | None) -> None:
        super().__init__(description)
        self.redirect_uri = redirect_uri
        self.error = error
        self.description = description
        self.state = state

    def location(self, issuer: str) -> str:
        """The redirect back to the client, naming the issuer (RFC 9207) so that a client
        talking to several authorization servers knows which one answered."""
        params = {"error": self.error, "error_description": self.description}
        if self.state is not None:
            params["state"] = self.state
        params["iss"] = issuer
        return with_query(self.redirect_uri, params)


@dataclass(frozen=True)
class AuthorizationRequest:
    app: OAuthApp
    redirect_uri: str
    scopes: list[str]
    code_challenge: str
    state: str | None
    resource: str | None
    # The client_id as the client sent it: a metadata document's URL, else `app.client_id`.
    client_id: str | None = None

    def params(self) -> dict[str, str]:
        """The request again, for the consent form's hidden fields."""
        out = {
            "response_type": "code",
            "client_id": self.client_id or self.app.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(self.scopes),
            "code_challenge": self.code_challenge,
            "code_challenge_method": "S256",
        }
        if self.resource is not None:
            out["resource"] = self.resource
        if self.state is not None:
            out["state"] = self.state
        return out

    def deny(self, error: str, description: str) -> AuthorizeRedirectError:
        return AuthorizeRedirectError(self.redirect_uri, error, description, self.state)


def with_query(uri: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(uri)
    query = parts.query + ("&" if parts.query else "") + urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _single(params: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = params.get(name) or []
    return values[0] if values else None


async def _client_app(
    session: AsyncSession, client_id: str, client_metadata: MetadataSource | None
) -> OAuthApp | None:
    """The client's app: a registered one, or (an https URL) the one its metadata document
    describes, fetched now (or from the cache) and stored."""
    if not is_url_client_id(client_id):
        return await app_by_client_id(session, client_id)
    if client_metadata is None:
        return None
    try:
        metadata = await client_metadata(client_id)
    except ClientMetadataError as exc:
        raise AuthorizePageError("Client metadata document refused", str(exc)) from None
    return await app_for_document(session, metadata)


async def validate_authorization_request(
    session: AsyncSession,
    params: Mapping[str, Sequence[str]],
    *,
    mcp_url: str,
    client_metadata: MetadataSource | None = None,
) -> AuthorizationRequest:
    """`params` maps each name to all its values, so that repeated parameters are caught.
    `client_metadata` gives the metadata document of a client identified by an https URL
    (salesplan.oauth.client_metadata.request_metadata); without it such a client is unknown."""
    client_id = _single(params, "client_id")
    if not client_id:
        raise AuthorizePageError("Missing client", "The request does not name a client_id.")
    if len(params.get("client_id") or []) > 1:
        raise AuthorizePageError("Invalid request", "client_id is repeated.")
    app = await _client_app(session, client_id, client_metadata)
    if app is None:
        raise AuthorizePageError(
            "Unknown application", "No application is registered with this client_id."
        )
    redirect_uri = _single(params, "redirect_uri")
    if not redirect_uri:
        raise AuthorizePageError("Missing redirect URI", "The request has no redirect_uri.")
    if len(params.get("redirect_uri") or []) > 1 or redirect_uri not in app.redirect_uris:
        raise AuthorizePageError(
            "Redirect URI not registered",
            "The redirect_uri does not exactly match one registered for this application.",
        )

    state = _single(params, "state")

    def fail(error: str, description: str) -> AuthorizeRedirectError:
        return AuthorizeRedirectError(redirect_uri, error, description, state)

    repeated = [n for n in AUTHORIZE_PARAMS if len(params.get(n) or []) > 1]
    if repeated:
        raise fail("invalid_request", f"Repeated parameter: {repeated[0]}.")
    response_type = _single(params, "response_type")
    if not response_type:
        raise fail("invalid_request", "response_type is required.")
    if response_type != "code":
        raise fail("unsupported_response_type", "Only response_type=code is supported.")
    if "authorization_code" not in app.grant_types:
        raise fail("unauthorized_client", "This client may not use the authorization code grant.")
    challenge = _single(params, "code_challenge")
    method = _single(params, "code_challenge_method")
    if not challenge:
        raise fail("invalid_request", "code_challenge is required (PKCE).")
    if not method:
        raise fail("invalid_request", "code_challenge_method is required and must be S256.")
    if method != "S256":
        raise fail("invalid_request", "code_challenge_method must be S256.")
    if not _CHALLENGE.match(challenge):
        raise fail("invalid_request", "code_challenge is not a valid S256 challenge.")
    scope = _single(params, "scope")
    scopes = parse_scopes(scope)
    if not scopes:
        raise fail("invalid_request", "scope is required.")
    outside = [s for s in scopes if s not in app.scopes]
    if outside:
        raise fail("invalid_scope", "Scopes not allowed for this client: " + " ".join(outside))
    resource = _single(params, "resource")
    if resource is not None and resource != mcp_url:
        raise fail("invalid_target", f"The only protected resource here is {mcp_url}.")
    return AuthorizationRequest(
        app, redirect_uri, scopes, challenge, state, resource, client_id=client_id
    )


async def consent_organizations(
    session: AsyncSession, app: OAuthApp, user_id: uuid.UUID
) -> list[uuid.UUID]:
    """The organizations a user may grant: theirs, within the app's limits."""
    member_of = list(await user_organizations(session, user_id))
    if app.organization_ids is None:
        return member_of
    allowed = {uuid.UUID(str(o)) for o in app.organization_ids}
    return [o for o in member_of if o in allowed]


async def create_authorization_code(
    session: AsyncSession,
    request: AuthorizationRequest,
    *,
    user_id: uuid.UUID,
    organization_id: uuid.UUID,
    scopes: Sequence[str] | None = None,
) -> str:
    """A code for what the person consented to: `scopes` (the ticked ones) within the
    request's, else all the request named; its token carries exactly these."""
    granted = list(request.scopes) if scopes is None else [s for s in request.scopes if s in scopes]
    raw = CODE_PREFIX + secrets.token_urlsafe(32)
    session.add(
        OAuthCode(
            code_hash=token_hash(raw),
            app_id=request.app.id,
            user_id=user_id,
            organization_id=organization_id,
            redirect_uri=request.redirect_uri,
            code_challenge=request.code_challenge,
            scopes=granted,
            resource=request.resource,
            expires_at=utcnow() + timedelta(seconds=CODE_SECONDS),
        )
    )
    await session.flush()
    return raw
