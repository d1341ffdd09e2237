"""What every CLI command shares: output (JSON when piped, tables on a terminal), failing with
one clear line, running in one transaction on a migrated database, and parsing ids. The command
modules of `salesplan.cli` import these; nothing here imports them."""

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
err = Console(stderr=True)

OrgOpt = Annotated[str, typer.Option("--org", metavar="ORG_ID", help="Organization id.")]


def emit(data: dict[str, Any], title: str = "") -> None:
    """JSON when piped, a table on a terminal."""
    if not sys.stdout.isatty():
        print(json.dumps(data, default=str))
        return
    table = Table(title=title or None, show_header=False)
    for key, value in data.items():
        table.add_row(key, str(value))
    Console().print(table)


def emit_rows(rows: list[dict[str, Any]], title: str) -> None:
    """A JSON array when piped, a table with a header row on a terminal."""
    if not sys.stdout.isatty():
        print(json.dumps(rows, default=str))
        return
    table = Table(title=title)
    for column in rows[0] if rows else ["(none)"]:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if v is None else _cell(v) for v in row.values()))
    Console().print(table)


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}", soft_wrap=True, highlight=False)
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
    if settings.is_sqlite:
        upgrade_or_fail(settings.database_url)


def upgrade_or_fail(database_url: str) -> None:
    """Apply migrations; a database that cannot be reached is one line saying what to do."""
    from salesplan.migrate import connection_problem, missing_folder, upgrade

    folder = missing_folder(database_url)
    if folder:
        fail(folder)
    try:
        upgrade(database_url)
    except Exception as exc:
        problem = connection_problem(exc, database_url)
        if problem is None:
            raise
        fail(problem)


def parse_uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        fail(f"{what} must be a UUID, got {value!r}")
        raise


def parse_uuids(values: list[str] | None, what: str) -> list[uuid.UUID] | None:
    """Each of a repeated option's values as a UUID; None when the option was not given."""
    return [parse_uuid(value, what) for value in values] if values else None
