"""`salesplan admin …`: organizations, users, passwords, API keys, OAuth apps and integrations."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.cli.support import (
    OrgOpt,
    ask_password,
    emit,
    emit_rows,
    fail,
    parse_uuid,
    parse_uuids,
    run_in_session,
)
from salesplan.config import Settings

MIN_PASSWORD = 12  # NIST SP 800-63B: length, no composition rules

admin = typer.Typer(
    no_args_is_help=True, help="Organizations, users, passwords, API keys and OAuth apps."
)

UserOpt = Annotated[str, typer.Option("--user", metavar="USER_ID", help="User id.")]
ScopesOpt = Annotated[
    list[str] | None,
    typer.Option("--scope", metavar="SCOPE", help="Repeat; all when omitted."),
]


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        fail(f"the password must be at least {MIN_PASSWORD} characters (a passphrase is fine).")


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _listing(
    model: Any, owner: Any, user: str | None, row: Callable[[Any], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every row of `model` (oldest first), only those of `--user` (the column `owner`) if given."""
    from sqlalchemy import select

    user_id = parse_uuid(user, "--user") if user else None

    async def go(session: AsyncSession) -> list[dict[str, Any]]:
        query = select(model).order_by(model.created_at, model.id)
        if user_id is not None:
            query = query.where(owner == user_id)
        return [row(r) for r in (await session.execute(query)).scalars()]

    return run_in_session(go)


@admin.command("create-org")
def create_org(
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="Organization name.")],
) -> None:
    """Create an organization; prints {"id": …}."""
    from salesplan.organizations.service import create_organization

    async def go(session: AsyncSession) -> dict[str, Any]:
        org = await create_organization(session, name=name)
        return {"id": str(org.id), "name": org.name, "slug": org.slug}

    emit(run_in_session(go), "organization")


@admin.command("create-user")
def create_user(
    org: Annotated[str, typer.Option("--org", metavar="ORG_ID", help="Organization id.")],
    email: Annotated[str, typer.Option("--email", metavar="EMAIL")],
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            metavar="PASSWORD",
            help=f"At least {MIN_PASSWORD} characters; needed for a new user.",
        ),
    ] = None,
    role: Annotated[
        str, typer.Option("--role", metavar="ROLE", help="admin, member or consultant.")
    ] = "member",
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="Full name.")] = None,
) -> None:
    """Add a user (or a membership of an existing user); prints {"id": …}."""
    from salesplan.organizations.service import add_user

    org_id = parse_uuid(org, "--org")
    if password is not None:
        check_password(password)

    async def go(session: AsyncSession) -> dict[str, Any]:
        user = await add_user(
            session,
            organization_id=org_id,
            email=email,
            password=password,
            role=role,
            full_name=name,
        )
        return {"id": str(user.id), "email": user.email, "role": role}

    emit(run_in_session(go), "user")


@admin.command("create-api-key")
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
    """Create a partner API key; prints {"id": …, "key": …, "expiresAt": …}. The key is shown
    only once. Without --org it reaches the organizations the user belongs to now."""
    from salesplan.auth.tokens import create_api_key, expiry_in_days

    user_id = parse_uuid(user, "--user")
    org_ids = parse_uuids(org, "--org")

    async def go(session: AsyncSession) -> dict[str, Any]:
        key, raw = await create_api_key(
            session,
            user_id=user_id,
            name=name,
            scopes=scope or None,
            organization_ids=org_ids,
            expires_at=expiry_in_days(expires_in_days),
        )
        return {
            "id": str(key.id),
            "key": raw,
            "scopes": " ".join(key.scopes),
            "expiresAt": _iso(key.expires_at),
        }

    emit(run_in_session(go), "API key (shown once)")


@admin.command("create-oauth-app")
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
    """Create an OAuth app; prints {"client_id", "client_secret"}. The secret is shown once."""
    from salesplan.oauth.apps import create_oauth_app

    user_id = parse_uuid(user, "--user")
    org_ids = parse_uuids(org, "--org")
    if not grant:
        grant = ["authorization_code", "client_credentials"] if redirect_uri else None
        grant = grant or ["client_credentials"]
    if "authorization_code" in grant and not redirect_uri:
        fail("an authorization_code app needs at least one --redirect-uri.")

    async def go(session: AsyncSession) -> dict[str, Any]:
        app, secret = await create_oauth_app(
            session,
            owner_user_id=user_id,
            name=name,
            scopes=scope or None,
            organization_ids=org_ids,
            redirect_uris=redirect_uri or [],
            grant_types=grant,
        )
        return {
            "client_id": app.client_id,
            "client_secret": secret,
            "scopes": " ".join(app.scopes),
            "grant_types": " ".join(app.grant_types),
        }

    emit(run_in_session(go), "OAuth app (secret shown once)")


@admin.command("list-users")
def list_users(
    org: Annotated[
        str | None, typer.Option("--org", metavar="ORG_ID", help="Only this organization.")
    ] = None,
) -> None:
    """List users with their organizations and roles."""
    from sqlalchemy import select

    from salesplan.kit.scoping import OrgScope, in_organization
    from salesplan.models.identity import Membership, User

    org_id = parse_uuid(org, "--org") if org else None

    async def go(session: AsyncSession) -> list[dict[str, Any]]:
        query = (
            select(User, Membership.organization_id, Membership.role)
            .outerjoin(Membership, Membership.user_id == User.id)
            .order_by(User.email, Membership.organization_id)
        )
        if org_id is not None:
            query = query.where(in_organization(Membership, OrgScope(org_id)))
        users: dict[uuid.UUID, dict[str, Any]] = {}
        for user, organization_id, role in (await session.execute(query)).all():
            row = users.setdefault(
                user.id,
                {"id": str(user.id), "email": user.email, "name": user.full_name, "roles": []},
            )
            if organization_id is not None:
                row["roles"].append(f"{organization_id}:{role}")
        return list(users.values())

    emit_rows(run_in_session(go), "users")


@admin.command("set-password")
def set_password(
    user: UserOpt,
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            metavar="PASSWORD",
            help=f"At least {MIN_PASSWORD} characters; asked for when omitted (twice on a "
            "terminal, one line when piped).",
        ),
    ] = None,
) -> None:
    """Set a user's password; the user's browser sessions are signed out."""
    from sqlalchemy import delete

    from salesplan.auth.passwords import hash_password
    from salesplan.errors import NotFound
    from salesplan.models.identity import User
    from salesplan.models.oauth import WebSession

    user_id = parse_uuid(user, "--user")
    if password is not None:
        check_password(password)

    async def known(session: AsyncSession) -> None:
        if await session.get(User, user_id) is None:
            raise NotFound("User not found.", details={"id": str(user_id)})

    if password is None:
        run_in_session(known)  # an unknown user is said before the password is asked for
        password = ask_password()
        check_password(password)
    new_password = password

    async def go(session: AsyncSession) -> dict[str, Any]:
        row = await session.get(User, user_id)
        if row is None:
            raise NotFound("User not found.", details={"id": str(user_id)})
        row.password_hash = hash_password(new_password)
        await session.execute(delete(WebSession).where(WebSession.user_id == user_id))
        return {"id": str(row.id), "email": row.email, "passwordChanged": True}

    emit(run_in_session(go), "password set")


def _key_row(key: Any) -> dict[str, Any]:
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


@admin.command("list-api-keys")
def list_api_keys(
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER_ID", help="Only this user's keys.")
    ] = None,
) -> None:
    """List API keys (never the keys themselves), revoked ones included."""
    from salesplan.models.identity import ApiKey

    emit_rows(_listing(ApiKey, ApiKey.user_id, user, _key_row), "API keys")


@admin.command("revoke-api-key")
def revoke_api_key_cmd(
    key_id: Annotated[str, typer.Option("--id", metavar="KEY_ID", help="The key's id.")],
) -> None:
    """Revoke an API key: it stops working at once (other server processes within seconds)."""
    from salesplan.auth.tokens import revoke_api_key
    from salesplan.errors import NotFound
    from salesplan.models.identity import ApiKey

    ident = parse_uuid(key_id, "--id")

    async def go(session: AsyncSession) -> dict[str, Any]:
        key = await session.get(ApiKey, ident)
        if key is None:
            raise NotFound("API key not found.", details={"id": str(ident)})
        await revoke_api_key(session, user_id=key.user_id, key_id=key.id)
        return _key_row(key)

    emit(run_in_session(go), "API key revoked")


def _app_row(app: Any) -> dict[str, Any]:
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


@admin.command("list-oauth-apps")
def list_oauth_apps(
    user: Annotated[
        str | None, typer.Option("--user", metavar="USER_ID", help="Only apps this user owns.")
    ] = None,
) -> None:
    """List OAuth apps, those registered dynamically by MCP clients included."""
    from salesplan.models.oauth import OAuthApp

    emit_rows(_listing(OAuthApp, OAuthApp.owner_user_id, user, _app_row), "OAuth apps")


@admin.command("revoke-oauth-app")
def revoke_oauth_app(
    client_id: Annotated[
        str, typer.Option("--client-id", metavar="CLIENT_ID", help="The app's client_id.")
    ],
) -> None:
    """Delete an OAuth app with its codes and tokens: they stop working at once."""
    from salesplan.auth.tokens import principal_cache
    from salesplan.errors import NotFound
    from salesplan.oauth.apps import app_by_client_id

    async def go(session: AsyncSession) -> dict[str, Any]:
        found = await app_by_client_id(session, client_id)
        if found is None:
            raise NotFound("OAuth app not found.", details={"clientId": client_id})
        row = _app_row(found)
        await session.delete(found)
        await session.flush()
        principal_cache.invalidate_app(found.id)
        return row | {"revoked": True}

    emit(run_in_session(go), "OAuth app revoked")


@admin.command("set-integration")
def set_integration_cmd(
    org: OrgOpt,
    slack_webhook_url: Annotated[
        str | None,
        typer.Option("--slack-webhook-url", metavar="URL", help="Incoming webhook; '' clears it."),
    ] = None,
    slack_signing_secret: Annotated[
        str | None,
        typer.Option("--slack-signing-secret", metavar="SECRET", help="Events API signing secret."),
    ] = None,
    own_domains: Annotated[
        str | None,
        typer.Option(
            "--own-domains",
            metavar="A.COM,B.COM",
            help="The organization's own e-mail domains for the feed; '' goes back to its users'.",
        ),
    ] = None,
) -> None:
    """Set an organization's Slack integration (stored encrypted); prints what is configured."""
    from salesplan.engage.delivery.integrations import set_integration

    org_id = parse_uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, Any]:
        configured = await set_integration(
            session,
            settings,
            org_id,
            slack_webhook_url=slack_webhook_url,
            slack_signing_secret=slack_signing_secret,
        )
        if own_domains is None:
            return {"organizationId": str(org_id), **configured}
        from salesplan.feed.domains import parse_own_domains
        from salesplan.feed.service import set_own_domains

        domains = await set_own_domains(session, org_id, parse_own_domains(own_domains))
        return {"organizationId": str(org_id), **configured, "ownDomains": domains}

    emit(run_in_session(go, settings), "integration")


@admin.command("inbound-secret")
def inbound_secret_cmd(org: OrgOpt) -> None:
    """Print the organization's inbound e-mail HMAC secret as {"secret": …} (created once)."""
    from salesplan.engage.delivery.integrations import inbound_secret

    org_id = parse_uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, Any]:
        return {"secret": await inbound_secret(session, settings, org_id, create=True)}

    emit(run_in_session(go, settings), "inbound secret")


# --- webhooks (contract §13) ------------------------------------------------------------------

webhooks = typer.Typer(no_args_is_help=True, help="Outbound webhook endpoints of an organization.")
admin.add_typer(webhooks, name="webhooks")
EndpointOpt = Annotated[str, typer.Option("--id", metavar="ENDPOINT_ID", help="The endpoint's id.")]


def _endpoint_row(endpoint: Any) -> dict[str, Any]:
    from salesplan.webhooks.schemas import EndpointOut

    return EndpointOut.model_validate(endpoint).model_dump(mode="json", by_alias=True)


@webhooks.command("list")
def webhooks_list(org: OrgOpt) -> None:
    """List the organization's endpoints (never their secrets)."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.service import all_endpoints

    scope = RequestContext.internal(parse_uuid(org, "--org"))

    async def go(session: AsyncSession) -> list[dict[str, Any]]:
        return [_endpoint_row(e) for e in await all_endpoints(session, scope)]

    emit_rows(run_in_session(go), "webhook endpoints")


@webhooks.command("create")
def webhooks_create(
    org: OrgOpt,
    url: Annotated[str, typer.Option("--url", metavar="URL", help="https address to POST to.")],
    event_type: Annotated[
        list[str] | None,
        typer.Option(
            "--event-type",
            metavar="TYPE",
            help="Repeat (account.created, contact.*…); all when omitted.",
        ),
    ] = None,
    description: Annotated[str | None, typer.Option("--description", metavar="TEXT")] = None,
) -> None:
    """Create an endpoint; prints it with its signing secret (shown this once)."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.schemas import EndpointIn
    from salesplan.webhooks.service import new_endpoint

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    settings = Settings()
    try:
        body = EndpointIn.model_validate(
            {"url": url, "description": description, "eventTypes": event_type or []}
        )
    except ValueError as exc:  # pydantic's ValidationError
        fail(f"invalid endpoint: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}")
        raise

    async def go(session: AsyncSession) -> dict[str, Any]:
        endpoint, secret = await new_endpoint(session, settings, scope, body)
        return _endpoint_row(endpoint) | {"secret": secret}

    emit(run_in_session(go, settings), "webhook endpoint")


@webhooks.command("delete")
def webhooks_delete(org: OrgOpt, endpoint_id: EndpointOpt) -> None:
    """Delete an endpoint permanently, with its pending deliveries."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.service import remove_endpoint

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    ident = parse_uuid(endpoint_id, "--id")

    async def go(session: AsyncSession) -> dict[str, Any]:
        await remove_endpoint(session, scope, ident)
        return {"id": str(ident), "deleted": True}

    emit(run_in_session(go), "webhook endpoint deleted")


@webhooks.command("rotate")
def webhooks_rotate(org: OrgOpt, endpoint_id: EndpointOpt) -> None:
    """A new signing secret (shown this once); the old one keeps signing for 24 h."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.service import new_secret

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    ident = parse_uuid(endpoint_id, "--id")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, Any]:
        endpoint, secret = await new_secret(session, settings, scope, ident)
        return _endpoint_row(endpoint) | {"secret": secret}

    emit(run_in_session(go, settings), "webhook endpoint")
