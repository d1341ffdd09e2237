"""The `salesplan` command: serve, migrate, demo and worker here; the command groups in their
own modules (`admin/`: `salesplan admin …`, `imports.py`: `salesplan import …`); what every
command shares in `support.py`. The modules import `support`, never this package's `__init__`.
What a command needs beyond typer and rich (the settings, the database, the app, uvicorn) it
imports when it runs (see `support.py`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup, TyperOption

from salesplan import __version__
from salesplan.cli.admin import admin
from salesplan.cli.imports import import_app
from salesplan.cli.serving import Server
from salesplan.cli.support import (
    emit,
    ensure_migrated,
    err,
    fail,
    note_stray_database,
    require_current_schema,
    run_in_session,
    say,
    upgrade_or_fail,
    usage_error,
)

if TYPE_CHECKING:
    from salesplan.config import Settings


def _option_label(self: TyperOption, ctx: typer.Context) -> str | None:
    """`--scope SCOPE` in --help, not typer's `<list[str]>`: the metavar, else the option's name
    (`--batch-size BATCH_SIZE`)."""
    if self.is_flag:
        return None
    return self.metavar or (self.name or "value").upper()


TyperOption.display_type_rich = _option_label  # type: ignore[method-assign,assignment]


class _Salesplan(TyperGroup):
    """The `salesplan` command: its usage errors (a missing option, a bad value) as one
    `error: …` line, like every other error of the command, rendered here rather than by
    typer's rich error renderer, whose import is a third of a command's start."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            result = super().main(
                args, prog_name, complete_var, False, windows_expand_args, **extra
            )
        except typer.TyperException as exc:  # click's ClickException (a usage error)
            usage_error(exc)
            sys.exit(exc.exit_code)
        except typer.Abort:  # Ctrl-D at a prompt: typer's own line
            from typer import rich_utils

            rich_utils.rich_abort_error()
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


app = typer.Typer(
    cls=_Salesplan, no_args_is_help=True, add_completion=False, help="salesplan server and admin."
)
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
    server: Annotated[
        Server | None,
        typer.Option(
            metavar="NAME",
            help="HTTP server: granian (default) or uvicorn (SALESPLAN_SERVER).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve REST, MCP, OAuth and the web pages (migrates the embedded database first)."""
    from salesplan.cli import serving
    from salesplan.config import Settings

    settings = Settings()
    check_dkim(settings)
    if workers > 1 and settings.is_sqlite:
        fail("--workers above 1 needs PostgreSQL (SALESPLAN_DATABASE_URL).")
    if workers > 1 and not settings.redis_url:
        fail("--workers above 1 needs SALESPLAN_REDIS_URL so that rate limits are shared.")
    if not settings.is_sqlite and not settings.secret_key:
        fail("SALESPLAN_SECRET_KEY is required with PostgreSQL.")
    if settings.is_sqlite:
        ensure_migrated(settings)
    else:  # PostgreSQL is migrated by `salesplan migrate`, never by serve
        require_current_schema(settings)
    if "public_url" not in settings.model_fields_set:
        # Links (discovery, mapUrl, WWW-Authenticate) name the origin actually served. Through
        # the environment, so that every worker process's Settings() reads it.
        os.environ["SALESPLAN_PUBLIC_URL"] = served_origin(host, port)
        remember_served_origin(settings, served_origin(host, port))
    err.print(f"salesplan serving on http://{host}:{port} (API at /api/v1, docs at /docs)")
    serving.run(
        server or settings.server,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
    )


def check_dkim(settings: Settings) -> None:
    """A configured DKIM key that does not load stops the command at start (contract §14)."""
    from salesplan.engage.delivery.dkim import DkimKeyError, load_signer

    try:
        load_signer(settings)
    except DkimKeyError as exc:
        fail(str(exc))


SERVED_ORIGIN = "served-origin"
"""The file where `serve` notes the origin it serves (when SALESPLAN_PUBLIC_URL is unset), so that
`demo` prints a sign-in on the server's port: beside the embedded database, or for PostgreSQL in
the data folder, one file per database."""


def served_origin_file(settings: Settings) -> Path:
    if settings.is_sqlite:
        return settings.sqlite_folder / SERVED_ORIGIN
    from sqlalchemy.engine import make_url

    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    return settings.data_dir / f"{SERVED_ORIGIN}-{hashlib.sha256(shown.encode()).hexdigest()[:16]}"


def remember_served_origin(settings: Settings, origin: str) -> None:
    path = served_origin_file(settings)
    with contextlib.suppress(OSError):  # a note for `demo`: serving goes on without it
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(origin + "\n")


def public_origin(settings: Settings) -> str:
    """SALESPLAN_PUBLIC_URL, else the origin `serve` last served on this database, else the
    default."""
    if "public_url" in settings.model_fields_set:
        return settings.public_url
    noted = served_origin_file(settings)
    origin = noted.read_text().strip() if noted.is_file() else ""
    return origin.rstrip("/") or settings.public_url


@app.command()
def migrate() -> None:
    """Apply database migrations (Alembic); says how many it applied."""
    from salesplan.config import Settings

    settings = Settings()
    note_stray_database(settings)
    applied = upgrade_or_fail(settings)
    if applied:
        say(f"applied {applied} revision{'s' if applied != 1 else ''}")
    else:
        say("database is up to date: nothing to apply")


@app.command()
def demo() -> None:
    """Load a demo organization once and print a sign-in and an API key (the previous demo
    key is revoked: one at a time)."""
    from salesplan.config import Settings
    from salesplan.demo import load_demo

    settings = Settings()
    result = run_in_session(load_demo, settings)
    if result.revoked_keys:
        say(f"revoked the previous demo key ({result.revoked_keys}); use the one printed now")
    if result.password is None:
        say(
            "the demo user's password was changed since the demo was loaded: use that one, or "
            f"set another with salesplan admin set-password --user {result.user_id}"
        )
    emit(
        {
            "organizationId": result.organization_id,
            "userId": result.user_id,
            "signIn": f"{public_origin(settings)}/login",
            "email": result.email,
            "password": result.password,  # null once changed: only the user knows it
            "apiKey": result.api_key,
            "loaded": result.created,
        },
        "salesplan demo",
    )


@app.command()
def worker() -> None:
    """Run the background worker (enrollment jobs; delivery and calendar sync join it)."""
    import asyncio
    import logging

    from salesplan.config import Settings
    from salesplan.jobs.loop import run_standalone

    settings = Settings()
    check_dkim(settings)
    require_current_schema(settings)  # never creates nor migrates a database
    logging.basicConfig(level=settings.log_level.upper())
    asyncio.run(run_standalone(settings))


app.add_typer(import_app, name="import")


def main() -> None:
    app()
