"""`salesplan admin create-api-key|list-api-keys|revoke-api-key` and
`create-oauth-app|list-oauth-apps|revoke-oauth-app`: the credentials partners and MCP clients
hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from salesplan.cli.support import (
    UserOpt,
    emit,
    emit_rows,
    fail,
    parse_uuid,
    parse_uuids,
    run_in_session,
)

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.ext.asyncio import AsyncSession

    from salesplan.models.identity import ApiKey
    from salesplan.models.oauth import OAuthApp

ScopesOpt = Annotated[
    list[str] | None,
    typer.Option("--scope", metavar="SCOPE", help="Repeat; all when omitted."),
]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def create_api_key_cmd(
    user: UserOpt,
    scope: ScopesOpt = None,
    org: Annotated[
        list[str] | None,
        typer.Option("--org", metavar="ORG_ID", help="Limit to these organizations."),
    ] = None,
    name: Annotated[str, typer.Option("--name", metavar="NAME")] = "cli",
    expires_in_days: Annotated[
        int | None,
        typer.Option(
            "--expires-in-days", metavar="N", help="Expire after N days (default: never)."
        ),
    ] = None,
) -> None:
    """Create a partner API key; prints list-api-keys' row for it with the key: {"id", "key",
    "scopes": […], "expiresAt", …}. The key is shown only once. Without --org it reaches the organizations the user belongs to now."""
    from salesplan.auth.tokens import create_api_key, expiry_in_days

    user_id = parse_uuid(user, "--user")
    org_ids = parse_uuids(org, "--org")

    async def go(session: AsyncSession) -> dict[str, object]:
        key, raw = await create_api_key(
            session,
            user_id=user_id,
            name=name,
            scopes=scope or None,
            organization_ids=org_ids,
            expires_at=expiry_in_days(expires_in_days),
        )
        row = _key_row(key)
        return {"id": row["id"], "key": raw} | row  # list-api-keys' row, the key near the top

    emit(run_in_session(go), "API key (shown once)")


def create_oauth_app_cmd(
    user: Annotated[str, typer.Option("--user", metavar="USER_ID", help="Owner user id.")],
    name: Annotated[
        str, typer.Option("--name", metavar="NAME", help="App name (shown on consent).")
    ],
    scope: ScopesOpt = None,
    org: Annotated[
        list[str] | None,
        typer.Option(
            "--org",
            metavar="ORG_ID",
            help="Organizations it reaches; default: the owner's, now.",
        ),
    ] = None,
    redirect_uri: Annotated[
        list[str] | None,
        typer.Option(
            "--redirect-uri",
            metavar="URI",
            help="Repeat for several; required for authorization_code.",
        ),
    ] = None,
    grant: Annotated[
        list[str] | None,
        typer.Option(
            "--grant",
            metavar="GRANT",
            help="authorization_code and/or client_credentials; default: both with "
            "--redirect-uri, else client_credentials.",
        ),
    ] = None,
) -> None:
    """Create an OAuth app; prints list-oauth-apps' row for it with {"client_id",
    "client_secret"}. The secret is shown once."""
    from salesplan.oauth.apps import create_oauth_app

    user_id = parse_uuid(user, "--user")
    org_ids = parse_uuids(org, "--org")
    if not grant:
        grant = ["authorization_code", "client_credentials"] if redirect_uri else None
        grant = grant or ["client_credentials"]
    if "authorization_code" in grant and not redirect_uri:
        fail("an authorization_code app needs at least one --redirect-uri.")

    async def go(session: AsyncSession) -> dict[str, object]:
        app, secret = await create_oauth_app(
            session,
            owner_user_id=user_id,
            name=name,
            scopes=scope or None,
            organization_ids=org_ids,
            redirect_uris=redirect_uri or [],
            grant_types=grant,
        )
        # list-oauth-apps' row, and the credentials under their OAuth names (contract §11)
        return _app_row(app) | {"client_id": app.client_id, "client_secret": secret}

    emit(run_in_session(go), "OAuth app (secret shown once)")


def _key_row(key: ApiKey) -> dict[str, object]:
    from salesplan.auth.tokens import key_status

    return {
        "id": str(key.id),
        "name": key.name,
        "userId": str(key.user_id),
        "prefix": key.key_prefix,
        "scopes": list(key.scopes),
        "createdAt": _iso(key.created_at),
        "lastUsedAt": _iso(key.last_used_at),
        "expiresAt": _iso(key.expires_at),
        "revokedAt": _iso(key.revoked_at),
        "status": key_status(key),
    }


def list_api_keys(
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER_ID", help="Only this user's keys.")
    ] = None,
) -> None:
    """List API keys (never the keys themselves), revoked ones included."""
    from salesplan.auth.repository import all_api_keys

    user_id = parse_uuid(user, "--user") if user else None

    async def go(session: AsyncSession) -> list[dict[str, object]]:
        return [_key_row(key) for key in await all_api_keys(session, user_id)]

    emit_rows(run_in_session(go), "API keys")


def revoke_api_key_cmd(
    key_id: Annotated[str, typer.Option("--id", metavar="KEY_ID", help="The key's id.")],
) -> None:
    """Revoke an API key: it stops working at once (other server processes within seconds)."""
    from salesplan.auth.repository import api_key_by_id
    from salesplan.auth.tokens import revoke_api_key
    from salesplan.errors import NotFound

    ident = parse_uuid(key_id, "--id")

    async def go(session: AsyncSession) -> dict[str, object]:
        key = await api_key_by_id(session, ident)
        if key is None:
            raise NotFound("API key not found.", details={"id": str(ident)})
        await revoke_api_key(session, user_id=key.user_id, key_id=key.id)
        return _key_row(key)

    emit(run_in_session(go), "API key revoked")


def _app_row(app: OAuthApp) -> dict[str, object]:
    return {
        "id": str(app.id),
        "clientId": app.client_id,
        "name": app.name,
        "ownerUserId": str(app.owner_user_id) if app.owner_user_id else None,
        "grantTypes": list(app.grant_types),
        "scopes": list(app.scopes),
        "redirectUris": list(app.redirect_uris),
        "dynamic": app.dynamic,
        "createdAt": _iso(app.created_at),
    }


def list_oauth_apps(
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER_ID", help="Only apps this user owns.")
    ] = None,
) -> None:
    """List OAuth apps, those registered dynamically by MCP clients included."""
    from salesplan.oauth.repository import all_apps

    user_id = parse_uuid(user, "--user") if user else None

    async def go(session: AsyncSession) -> list[dict[str, object]]:
        return [_app_row(app) for app in await all_apps(session, user_id)]

    emit_rows(run_in_session(go), "OAuth apps")


def revoke_oauth_app(
    client_id: Annotated[
        str, typer.Option("--client-id", metavar="CLIENT_ID", help="The app's client_id.")
    ],
) -> None:
    """Delete an OAuth app with its codes and tokens: they stop working at once."""
    from salesplan.auth.tokens import principal_cache
    from salesplan.errors import NotFound
    from salesplan.oauth.apps import app_by_client_id
    from salesplan.oauth.repository import delete_app

    async def go(session: AsyncSession) -> dict[str, object]:
        found = await app_by_client_id(session, client_id)
        if found is None:
            raise NotFound("OAuth app not found.", details={"clientId": client_id})
        row = _app_row(found)
        await delete_app(session, found)
        principal_cache.invalidate_app(found.id)
        return row | {"revoked": True}

    emit(run_in_session(go), "OAuth app revoked")
