"""OAuth apps: creation (developer settings, CLI, dynamic registration), edits, secrets, and
client authentication at the token endpoint."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from collections.abc import Sequence
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.repository import user_organizations
from salesplan.auth.tokens import (
    check_member_of,
    chosen_scopes,
    hashes_match,
    principal_cache,
    token_hash,
)
from salesplan.errors import NotFound, ValidationFailed
from salesplan.models.identity import User
from salesplan.models.oauth import OAuthApp
from salesplan.oauth import repository
from salesplan.oauth.schemas import REDIRECT_URI_PATTERN

CLIENT_ID_PREFIX = "sp_client_"
CLIENT_SECRET_PREFIX = "sp_secret_"
CIMD_CLIENT_ID_PREFIX = "sp_cimd_"
GRANT_TYPES = ("authorization_code", "client_credentials")
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
CUSTOM_SCHEMES = ("vscode", "cursor")
_REDIRECT_URI = re.compile(REDIRECT_URI_PATTERN)


def redirect_uri_problem(uri: object) -> str | None:
    """Why a redirect URI is refused, or None: https anywhere, loopback http on any port, and
    the two desktop editors' custom schemes (contract §8). No fragments (RFC 6749 §3.1.2).
    What passes the checks below must also match the pattern the OpenAPI document declares
    (`REDIRECT_URI_PATTERN`), so that the two agree both ways: `vscode://s*` is refused."""
    if not isinstance(uri, str) or not uri or len(uri) > 2000:
        return "a redirect URI must be a non-empty string"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return f"{uri!r} is not a valid URL"
    if parts.fragment or "#" in uri:
        return f"{uri!r} must not contain a fragment"
    scheme = parts.scheme.lower()
    if scheme == "https":
        if not parts.hostname:
            return f"{uri!r} has no host"
    elif scheme == "http":
        if parts.hostname not in LOOPBACK_HOSTS or "@" in parts.netloc:
            return f"{uri!r}: plain http is allowed only on loopback (localhost, 127.0.0.1, [::1])"
    elif scheme not in CUSTOM_SCHEMES:
        return f"{uri!r}: only https, loopback http, vscode:// and cursor:// are accepted"
    if not _REDIRECT_URI.fullmatch(uri):
        return f"{uri!r} is not a valid redirect URI (see the registration's pattern)"
    return None


def check_redirect_uris(uris: Sequence[str]) -> list[str]:
    cleaned = [u.strip() for u in uris if u.strip()]
    for uri in cleaned:
        problem = redirect_uri_problem(uri)
        if problem:
            raise ValidationFailed.at(["redirect_uris"], problem)
    return list(dict.fromkeys(cleaned))


def new_client_id() -> str:
    return CLIENT_ID_PREFIX + secrets.token_urlsafe(18)


def new_client_secret() -> str:
    return CLIENT_SECRET_PREFIX + secrets.token_urlsafe(32)


async def _check_orgs(
    session: AsyncSession, user_id: uuid.UUID, organization_ids: Sequence[uuid.UUID]
) -> list[str]:
    await check_member_of(session, user_id, organization_ids)
    return [str(o) for o in dict.fromkeys(organization_ids)]


async def register_dynamic_app(
    session: AsyncSession,
    *,
    name: str,
    icon_url: str | None,
    client_uri: str | None,
    redirect_uris: Sequence[str],
    scopes: list[str],
    grant_types: list[str],
    auth_method: str,
) -> tuple[OAuthApp, str | None]:
    """A client registered itself (RFC 7591; its metadata already checked): no owner, every
    organization its users consent to. Answers the app and its secret (None for a public
    client), which is never stored."""
    secret = None if auth_method == "none" else new_client_secret()
    app = OAuthApp(
        owner_user_id=None,
        client_id=new_client_id(),
        client_secret_hash=token_hash(secret) if secret else None,
        name=name.strip()[:200],
        description="",
        icon_url=icon_url,
        client_uri=client_uri,
        redirect_uris=list(dict.fromkeys(redirect_uris)),
        scopes=scopes,
        organization_ids=None,
        grant_types=grant_types,
        token_endpoint_auth_method=auth_method,
        dynamic=True,
    )
    session.add(app)
    await session.flush()
    return app, secret


async def create_oauth_app(
    session: AsyncSession,
    *,
    owner_user_id: uuid.UUID,
    name: str,
    scopes: Sequence[str] | None = None,
    organization_ids: Sequence[uuid.UUID] | None = None,
    redirect_uris: Sequence[str] = (),
    grant_types: Sequence[str] | None = None,
    description: str = "",
    icon_url: str | None = None,
) -> tuple[OAuthApp, str]:
    """An app owned by a user; returns the row and its client secret (shown once).

    It reaches the organizations given, else those of its owner now (contract §11)."""
    if await session.get(User, owner_user_id) is None:
        raise NotFound("User not found.", details={"id": str(owner_user_id)})
    name = name.strip()
    if not name:
        raise ValidationFailed.at(["name"], "The app name is required.")
    grants = list(dict.fromkeys(grant_types or ["authorization_code", "client_credentials"]))
    bad = [g for g in grants if g not in GRANT_TYPES]
    if bad:
        raise ValidationFailed.at(["grant_types"], "Unknown grant types: " + ", ".join(bad))
    uris = check_redirect_uris(redirect_uris)
    if icon_url and redirect_uri_problem(icon_url) is not None:
        raise ValidationFailed.at(["icon_url"], "The icon must be an https URL.")
    if organization_ids:
        orgs = await _check_orgs(session, owner_user_id, organization_ids)
    else:
        orgs = [str(o) for o in await user_organizations(session, owner_user_id)]
    secret = new_client_secret()
    app = OAuthApp(
        owner_user_id=owner_user_id,
        client_id=new_client_id(),
        client_secret_hash=token_hash(secret),
        name=name[:200],
        description=description.strip(),
        icon_url=icon_url or None,
        redirect_uris=uris,
        scopes=chosen_scopes(scopes),
        organization_ids=orgs,
        grant_types=grants,
        token_endpoint_auth_method="client_secret_basic",
    )
    session.add(app)
    await session.flush()
    return app, secret


async def owned_app(session: AsyncSession, *, user_id: uuid.UUID, app_id: uuid.UUID) -> OAuthApp:
    app = await repository.owned_app(session, user_id, app_id)
    if app is None:
        raise NotFound("OAuth app not found.")
    return app


async def list_owned_apps(session: AsyncSession, *, user_id: uuid.UUID) -> list[OAuthApp]:
    return await repository.owned_apps(session, user_id)


async def update_oauth_app(
    session: AsyncSession,
    *,
    user_id: uuid.UUID,
    app_id: uuid.UUID,
    redirect_uris: Sequence[str],
    scopes: Sequence[str],
    organization_ids: Sequence[uuid.UUID],
    description: str | None = None,
) -> OAuthApp:
    app = await owned_app(session, user_id=user_id, app_id=app_id)
    if not scopes:
        raise ValidationFailed.at(["scopes"], "Choose at least one scope.")
    if not organization_ids:
        raise ValidationFailed.at(["organizations"], "Choose at least one organization.")
    app.redirect_uris = check_redirect_uris(redirect_uris)
    app.scopes = chosen_scopes(scopes)
    app.organization_ids = await _check_orgs(session, user_id, organization_ids)
    if description is not None:
        app.description = description.strip()
    await session.flush()
    principal_cache.invalidate_app(app.id)  # narrowed reach applies to live tokens at once
    return app


async def regenerate_client_secret(
    session: AsyncSession, *, user_id: uuid.UUID, app_id: uuid.UUID
) -> tuple[OAuthApp, str]:
    """A new secret; the previous one stops working at once (only the new hash is kept)."""
    app = await owned_app(session, user_id=user_id, app_id=app_id)
    secret = new_client_secret()
    app.client_secret_hash = token_hash(secret)
    await session.flush()
    return app, secret


async def delete_oauth_app(session: AsyncSession, *, user_id: uuid.UUID, app_id: uuid.UUID) -> None:
    """Deleting an app deletes its codes and tokens with it (foreign keys cascade)."""
    app = await owned_app(session, user_id=user_id, app_id=app_id)
    await session.delete(app)
    await session.flush()
    principal_cache.invalidate_app(app_id)


def is_url_client_id(client_id: str) -> bool:
    """A client id that names a client metadata document (or tries to: plain http is
    refused), see salesplan.oauth.client_metadata."""
    return client_id[:8].lower() == "https://" or client_id[:7].lower() == "http://"


def stored_client_id(url: str) -> str:
    """The app row's client id for the client whose metadata document is at `url` (fits the
    column; never a registered client's `sp_client_…`)."""
    return CIMD_CLIENT_ID_PREFIX + hashlib.sha256(url.encode()).hexdigest()[:48]


async def app_by_client_id(session: AsyncSession, client_id: str | None) -> OAuthApp | None:
    """The app of a client id: a registered one, or the stored app of a metadata document's
    URL (stored when an authorization request fetched it)."""
    if client_id and is_url_client_id(client_id):
        client_id = stored_client_id(client_id)
    if not client_id or len(client_id) > 64:
        return None
    return await repository.app_by_client_id(session, client_id)


def secret_matches(app: OAuthApp, presented: str) -> bool:
    if app.client_secret_hash is None:
        return False
    return hashes_match(app.client_secret_hash, token_hash(presented))
