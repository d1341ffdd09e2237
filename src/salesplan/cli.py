"""The `salesplan` command: serve, migrate, demo, admin, worker."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.config import Settings
from salesplan.errors import AppError

T = TypeVar("T")

app = typer.Typer(no_args_is_help=True, add_completion=False, help="salesplan server and admin.")
admin = typer.Typer(no_args_is_help=True, help="Create organizations, users, keys and apps.")
app.add_typer(admin, name="admin")
err = Console(stderr=True)


def emit(data: dict[str, Any], title: str = "") -> None:
    """JSON when piped, a table on a terminal."""
    if not sys.stdout.isatty():
        print(json.dumps(data, default=str))
        return
    table = Table(title=title or None, show_header=False)
    for key, value in data.items():
        table.add_row(key, str(value))
    Console().print(table)


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def run_in_session(
    fn: Callable[[AsyncSession], Awaitable[T]], settings: Settings | None = None
) -> T:
    """Run `fn` in one transaction on a migrated database; AppErrors become a clear exit 1."""
    from salesplan.db import create_engine, create_sessionmaker

    settings = settings or Settings()
    ensure_migrated(settings)

    async def go() -> T:
        engine = create_engine(settings)
        try:
            async with create_sessionmaker(engine)() as session:
                result = await fn(session)
                await session.commit()
                return result
        finally:
            await engine.dispose()

    try:
        return asyncio.run(go())
    except AppError as exc:
        detail = f" ({json.dumps(exc.details)})" if exc.details else ""
        fail(exc.message + detail)
        raise  # unreachable


def ensure_migrated(settings: Settings) -> None:
    """The embedded SQLite database is migrated automatically; PostgreSQL needs `migrate`."""
    from salesplan.migrate import upgrade

    if settings.is_sqlite:
        upgrade(settings.database_url)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    workers: Annotated[int, typer.Option(help="Worker processes (PostgreSQL + Redis).")] = 1,
) -> None:
    """Serve REST, MCP, OAuth and the web pages (migrates the embedded database first)."""
    import uvicorn

    settings = Settings()
    if workers > 1 and settings.is_sqlite:
        fail("--workers above 1 needs PostgreSQL (SALESPLAN_DATABASE_URL).")
    if workers > 1 and not settings.redis_url:
        fail("--workers above 1 needs SALESPLAN_REDIS_URL so that rate limits are shared.")
    if not settings.is_sqlite and not settings.secret_key:
        fail("SALESPLAN_SECRET_KEY is required with PostgreSQL.")
    ensure_migrated(settings)
    err.print(f"salesplan serving on http://{host}:{port} (API at /api/v1, docs at /docs)")
    uvicorn.run(
        "salesplan.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        proxy_headers=True,
    )


@app.command()
def migrate() -> None:
    """Apply database migrations (Alembic)."""
    from salesplan.migrate import upgrade

    settings = Settings()
    upgrade(settings.database_url)
    err.print("database is up to date")


@app.command()
def demo() -> None:
    """Load a demo organization once and print a sign-in and a new API key."""
    from salesplan.demo import load_demo

    settings = Settings()
    result = run_in_session(load_demo, settings)
    emit(
        {
            "organizationId": result.organization_id,
            "signIn": f"{settings.public_url}/login",
            "email": result.email,
            "password": result.password,
            "apiKey": result.api_key,
            "loaded": result.created,
        },
        "salesplan demo",
    )


def _uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        fail(f"{what} must be a UUID, got {value!r}")
        raise


@admin.command("create-org")
def create_org(name: Annotated[str, typer.Option("--name", help="Organization name.")]) -> None:
    """Create an organization; prints {"id": …}."""
    from salesplan.organizations.service import create_organization

    async def go(session: AsyncSession) -> dict[str, Any]:
        org = await create_organization(session, name=name)
        return {"id": str(org.id), "name": org.name, "slug": org.slug}

    emit(run_in_session(go), "organization")


@admin.command("create-user")
def create_user(
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    email: Annotated[str, typer.Option("--email")],
    password: Annotated[str | None, typer.Option("--password")] = None,
    role: Annotated[str, typer.Option("--role", help="admin, member or consultant.")] = "member",
    name: Annotated[str | None, typer.Option("--name", help="Full name.")] = None,
) -> None:
    """Add a user (or a membership of an existing user); prints {"id": …}."""
    from salesplan.organizations.service import add_user

    org_id = _uuid(org, "--org")

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
    user: Annotated[str, typer.Option("--user", help="User id.")],
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="Repeat; all when omitted.")
    ] = None,
    org: Annotated[
        list[str] | None, typer.Option("--org", help="Limit to these organizations.")
    ] = None,
    name: Annotated[str, typer.Option("--name")] = "cli",
) -> None:
    """Create a partner API key; prints {"id": …, "key": …}. The key is shown only once."""
    from salesplan.auth.tokens import create_api_key

    user_id = _uuid(user, "--user")
    org_ids = [_uuid(o, "--org") for o in org] if org else None

    async def go(session: AsyncSession) -> dict[str, Any]:
        key, raw = await create_api_key(
            session, user_id=user_id, name=name, scopes=scope or None, organization_ids=org_ids
        )
        return {"id": str(key.id), "key": raw, "scopes": " ".join(key.scopes)}

    emit(run_in_session(go), "API key (shown once)")


@admin.command("create-oauth-app")
def create_oauth_app_cmd(
    user: Annotated[str, typer.Option("--user", help="Owner user id.")],
    name: Annotated[str, typer.Option("--name", help="App name (shown on consent).")],
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="Repeat; all when omitted.")
    ] = None,
    org: Annotated[
        list[str] | None,
        typer.Option("--org", help="Organizations it reaches; default: the owner's, now."),
    ] = None,
    redirect_uri: Annotated[
        list[str] | None, typer.Option("--redirect-uri", help="Repeat for several.")
    ] = None,
    grant: Annotated[
        list[str] | None,
        typer.Option("--grant", help="authorization_code and/or client_credentials (both)."),
    ] = None,
) -> None:
    """Create an OAuth app; prints {"client_id", "client_secret"}. The secret is shown once."""
    from salesplan.oauth.apps import create_oauth_app

    user_id = _uuid(user, "--user")
    org_ids = [_uuid(o, "--org") for o in org] if org else None

    async def go(session: AsyncSession) -> dict[str, Any]:
        app, secret = await create_oauth_app(
            session,
            owner_user_id=user_id,
            name=name,
            scopes=scope or None,
            organization_ids=org_ids,
            redirect_uris=redirect_uri or [],
            grant_types=grant or None,
        )
        return {
            "client_id": app.client_id,
            "client_secret": secret,
            "scopes": " ".join(app.scopes),
            "grant_types": " ".join(app.grant_types),
        }

    emit(run_in_session(go), "OAuth app (secret shown once)")


@admin.command("set-integration")
def set_integration_cmd(
    org: Annotated[str, typer.Option("--org", help="Organization id.")],
    slack_webhook_url: Annotated[
        str | None, typer.Option("--slack-webhook-url", help="Incoming webhook; '' clears it.")
    ] = None,
    slack_signing_secret: Annotated[
        str | None, typer.Option("--slack-signing-secret", help="Events API signing secret.")
    ] = None,
) -> None:
    """Set an organization's Slack integration (stored encrypted); prints what is configured."""
    from salesplan.engage.delivery.integrations import set_integration

    org_id = _uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, Any]:
        configured = await set_integration(
            session,
            settings,
            org_id,
            slack_webhook_url=slack_webhook_url,
            slack_signing_secret=slack_signing_secret,
        )
        return {"organizationId": str(org_id), **configured}

    emit(run_in_session(go, settings), "integration")


@admin.command("inbound-secret")
def inbound_secret_cmd(org: Annotated[str, typer.Option("--org", help="Organization id.")]) -> None:
    """Print the organization's inbound e-mail HMAC secret as {"secret": …} (created once)."""
    from salesplan.engage.delivery.integrations import inbound_secret

    org_id = _uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, Any]:
        return {"secret": await inbound_secret(session, settings, org_id, create=True)}

    emit(run_in_session(go, settings), "inbound secret")


def _register_import() -> None:
    from salesplan.accounts.import_cli import import_app

    app.add_typer(import_app, name="import")


_register_import()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
