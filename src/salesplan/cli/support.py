"""What every CLI command shares: output (JSON when piped, tables on a terminal, ids never cut),
failing with one clear line (`error: …`), naming the database used, running in one transaction
on a migrated database, and parsing ids. The command modules of `salesplan.cli` import these;
nothing here imports them.

Starting `salesplan` imports only typer and rich: the settings, SQLAlchemy, the models and the
domain modules (which bring FastAPI) are imported inside the functions that use them, so that
`--help`, `--version` and each command pay only for what they run."""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

    from salesplan.config import Settings
    from salesplan.kit.events import DomainEvent, EventHandlers

T = TypeVar("T")
err = Console(stderr=True)

OrgOpt = Annotated[str, typer.Option("--org", metavar="ORG_ID", help="Organization id.")]
UserOpt = Annotated[str, typer.Option("--user", metavar="USER_ID", help="User id.")]


def emit(data: Mapping[str, object], title: str = "") -> None:
    """JSON when piped, a table on a terminal."""
    if not sys.stdout.isatty():
        print(json.dumps(data, default=str))
        return
    Console().print(_records([data], title))


def emit_rows(rows: Sequence[Mapping[str, object]], title: str) -> None:
    """A JSON array when piped; on a terminal a table with a header row, or, when its ids would
    not fit the terminal's width whole, one name/value block per row (ids are never cut: they
    are what the README says to copy)."""
    if not sys.stdout.isatty():
        print(json.dumps(rows, default=str))
        return
    console = Console()
    columns = list(rows[0]) if rows else ["(none)"]
    cells = [[_cell(v) for v in row.values()] for row in rows]
    whole = {c: _whole_width(c, [r[i] for r in cells]) for i, c in enumerate(columns)}
    # Each column: its whole width for ids, else up to 12 characters (the rest folds onto
    # more lines); 3 characters of border and padding each.
    needed = 1 + sum(3 + (whole[c] or min(12, _longest(cells, i))) for i, c in enumerate(columns))
    if rows and needed > console.width:
        console.print(_records(rows, title))
        return
    table = Table(title=title)
    for column in columns:
        if whole[column]:
            table.add_column(column, no_wrap=True, min_width=whole[column])
        else:
            table.add_column(column, overflow="fold")
    for row in cells:
        table.add_row(*row)
    console.print(table)


_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def _cell(value: object) -> str:
    """A list of ids one a line (each whole), other lists space-separated; None as nothing."""
    if value is None:
        return ""
    if isinstance(value, list):
        items = [str(v) for v in value]
        return ("\n" if any(_ID.search(i) for i in items) else " ").join(items)
    return str(value)


def _longest(cells: list[list[str]], index: int) -> int:
    return max((len(line) for row in cells for line in row[index].splitlines()), default=0)


def _whole_width(column: str, values: list[str]) -> int:
    """The width a column needs so that none of its ids is cut (0: it holds no id)."""
    lines = [line for value in values for line in value.splitlines()]
    if column.lower().endswith("id") or any(_ID.search(line) for line in lines):
        return max([len(column), *(len(line) for line in lines)])
    return 0


def _records(rows: Sequence[Mapping[str, object]], title: str) -> Table:
    """Name/value blocks, one per row: the values fold onto more lines, never cut."""
    table = Table(title=title or None, show_header=False)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for index, row in enumerate(rows):
        if index:
            table.add_section()
        for key, value in row.items():
            table.add_row(key, _cell(value))
    return table


def fail(message: str, code: int = 1) -> None:
    """`error: …` on one line of stderr, and exit."""
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False)
    raise typer.Exit(code)


class _UsageError(Protocol):
    """Click's ClickException, as typer hands it to its error renderer."""

    def format_message(self) -> str: ...


def usage_error(exc: _UsageError) -> None:
    """Click's usage errors (a missing option, a bad value) in the same shape as `fail`: one
    `error: …` line (typer's default is a boxed "Error" panel)."""
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        message += f" (see {ctx.command_path} --help)"
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False)


def say(message: str) -> None:
    """A line for the operator on stderr (never part of the JSON on stdout)."""
    err.print(message, soft_wrap=True, highlight=False, markup=False)


_announced: set[str] = set()


def announce_database(settings: Settings) -> None:
    """`database: URL` on stderr, once per process (a PostgreSQL password never shown)."""
    from sqlalchemy.engine import make_url

    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    if shown not in _announced:
        _announced.add(shown)
        say(f"database: {shown}")


def stray_database(settings: Settings, cwd: Path | None = None) -> str | None:
    """A `./salesplan.db` left in the current folder by an older version (the default was
    relative to the current folder), when the data folder's database is the one used: where
    it is and how to move it."""
    if not settings.uses_data_dir:
        return None
    here = (cwd or Path.cwd()) / "salesplan.db"
    target = settings.data_dir / "salesplan.db"
    if not here.is_file() or (target.exists() and here.samefile(target)):
        return None
    secret = here.with_name("salesplan.secret")
    what = f"{here}* {secret}" if secret.exists() else f"{here}*"
    instead = "" if not target.exists() else " (it replaces the one there)"
    return (
        f"note: {here} is not used: the database is in {settings.data_dir} "
        f"(SALESPLAN_DATA_DIR). To keep its data, stop the server and move it there{instead}: "
        f"mv {what} {settings.data_dir}/ — or use it where it is: "
        f"SALESPLAN_DATABASE_URL=sqlite+aiosqlite:///{here}"
    )


def note_stray_database(settings: Settings) -> None:
    note = stray_database(settings)
    if note:
        say(note)


def run_in_session(
    fn: Callable[[AsyncSession], Awaitable[T]], settings: Settings | None = None
) -> T:
    """Run `fn` in one transaction on a migrated database; AppErrors become a clear exit 1."""
    from salesplan.config import Settings
    from salesplan.db import create_database, create_engine

    settings = settings or Settings()
    ensure_migrated(settings)

    async def go() -> T:
        from salesplan.kit.uow import UnitOfWork

        engine = create_engine(settings)
        try:
            # One unit of work: committed with its domain events when `fn` returns.
            async with UnitOfWork(create_database(engine, wired_when_used())) as uow:
                session = await uow.session()
                await session.connection()  # reached: say which database this is
                announce_database(settings)
                return await fn(session)
        finally:
            await engine.dispose()

    return run_on_database(go(), settings)


def wired_when_used() -> EventHandlers:
    """The app's event wiring (`salesplan.events.handlers()`), imported when a command's unit of
    work first has an event to handle or asks who follows one: the wiring imports every
    domain's handlers (and FastAPI with them), which a command that emits nothing (a list)
    does not need to start."""
    from salesplan.kit.events import EventHandlers

    class WiredWhenUsed(EventHandlers):
        def _wired(self) -> EventHandlers:
            from salesplan.events import handlers

            return handlers()

        async def run_in_transaction(
            self, conn: AsyncConnection, events: Sequence[DomainEvent]
        ) -> None:
            await self._wired().run_in_transaction(conn, events)

        async def run_after_commit(self, events: Sequence[DomainEvent]) -> None:
            if events:
                await self._wired().run_after_commit(events)

        async def interested(
            self,
            conn: AsyncConnection,
            organization_id: uuid.UUID,
            kinds: Sequence[type[DomainEvent]],
            *,
            besides: Sequence[object] = (),
        ) -> bool:
            return await self._wired().interested(conn, organization_id, kinds, besides=besides)

    return WiredWhenUsed()


def run_on_database(work: Coroutine[object, None, T], settings: Settings) -> T:
    """Run `work`: AppErrors, and a database that is missing, unreachable or not migrated, are
    one `error:` line and exit 1 — never a traceback."""
    import asyncio

    from salesplan.errors import AppError
    from salesplan.migrate import connection_problem

    try:
        return asyncio.run(work)
    except AppError as exc:
        detail = f" ({json.dumps(exc.details)})" if exc.details else ""
        fail(exc.message + detail)
        raise  # unreachable
    except Exception as exc:
        problem = connection_problem(exc, settings.database_url)
        if problem is None:
            raise
        fail(problem)
        raise  # unreachable


def ensure_migrated(settings: Settings) -> None:
    """The embedded SQLite database is migrated automatically; PostgreSQL needs `migrate`.
    Points at a database an older version left in the current folder."""
    from salesplan.migrate import sqlite_is_current

    note_stray_database(settings)
    if settings.is_sqlite and not sqlite_is_current(settings.database_url):
        upgrade_or_fail(settings)


def require_current_schema(settings: Settings) -> None:
    """`serve` on PostgreSQL and `worker` on either engine: a database that is missing,
    unreachable, empty or behind the migrations is one `error:` line and exit 1 at start."""
    from salesplan.migrate import schema_problem

    note_stray_database(settings)
    problem = schema_problem(settings)
    if problem:
        fail(problem)
    announce_database(settings)


def upgrade_or_fail(settings: Settings) -> int:
    """Apply migrations and say which database it was; a database that cannot be reached is
    one line saying what to do. Answers how many revisions were applied."""
    from salesplan.migrate import connection_problem, missing_folder, upgrade

    settings.make_data_dir()
    database_url = settings.database_url
    folder = missing_folder(database_url)
    if folder:
        fail(folder)
    try:
        applied = upgrade(database_url)
    except Exception as exc:
        problem = connection_problem(exc, database_url)
        if problem is None:
            raise
        fail(problem)
        raise  # unreachable
    announce_database(settings)
    return applied


def ask_password() -> str:
    """A new password: asked twice on a terminal; the first line of stdin when piped."""
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line:
            fail("no password on stdin: pipe one line, or pass --password.")
        return line.rstrip("\r\n")
    answer: str = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    return answer


def parse_uuid(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        fail(f"{what} must be a UUID, got {value!r}")
        raise


def parse_uuids(values: list[str] | None, what: str) -> list[uuid.UUID] | None:
    """Each of a repeated option's values as a UUID; None when the option was not given."""
    return [parse_uuid(value, what) for value in values] if values else None
