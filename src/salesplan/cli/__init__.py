"""The `salesplan` command: serve, migrate, demo and worker here; the command groups in their
own modules (`admin.py`: `salesplan admin …`, `imports.py`: `salesplan import …`); what every
command shares in `support.py`. The modules import `support`, never this package's `__init__`."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer
from typer.core import TyperOption

from salesplan import __version__
from salesplan.cli.admin import admin
from salesplan.cli.imports import import_app
from salesplan.cli.support import emit, ensure_migrated, err, fail, run_in_session, upgrade_or_fail
from salesplan.config import Settings


def _option_label(self: TyperOption, ctx: typer.Context) -> str | None:
    """`--scope SCOPE` in --help, not typer's `<list[str]>`: the metavar, else the option's name
    (`--batch-size BATCH_SIZE`)."""
    if self.is_flag:
        return None
    return self.metavar or (self.name or "value").upper()


TyperOption.display_type_rich = _option_label  # type: ignore[method-assign,assignment]

app = typer.Typer(no_args_is_help=True, add_completion=False, help="salesplan server and admin.")
app.add_typer(admin, name="admin")


def _version(value: bool) -> None:
    if value:
        print(f"salesplan {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """salesplan server and admin."""


def served_origin(host: str, port: int) -> str:
    """`http://{host}:{port}`, with an IPv6 address in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@app.command()
def serve(
    host: Annotated[str, typer.Option(metavar="HOST", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port to bind.")] = 8000,
    workers: Annotated[
        int, typer.Option(metavar="N", help="Worker processes (PostgreSQL + Redis).")
    ] = 1,
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
    if "public_url" not in settings.model_fields_set:
        # Links (discovery, mapUrl, WWW-Authenticate) name the origin actually served. Through
        # the environment, so that every worker process's Settings() reads it.
        os.environ["SALESPLAN_PUBLIC_URL"] = served_origin(host, port)
    err.print(f"salesplan serving on http://{host}:{port} (API at /api/v1, docs at /docs)")
    uvicorn.run(
        "salesplan.app:create_served_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        proxy_headers=False,  # the app's own, from SALESPLAN_TRUSTED_PROXIES only
    )


@app.command()
def migrate() -> None:
    """Apply database migrations (Alembic)."""
    settings = Settings()
    upgrade_or_fail(settings.database_url)
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
            "userId": result.user_id,
            "signIn": f"{settings.public_url}/login",
            "email": result.email,
            "password": result.password,
            "apiKey": result.api_key,
            "loaded": result.created,
        },
        "salesplan demo",
    )


@app.command()
def worker() -> None:
    """Run the background worker (enrollment jobs; delivery and calendar sync join it)."""
    import logging

    from salesplan.worker.loop import run_standalone

    settings = Settings()
    logging.basicConfig(level=settings.log_level.upper())
    asyncio.run(run_standalone(settings))


app.add_typer(import_app, name="import")


def main() -> None:
    app()
