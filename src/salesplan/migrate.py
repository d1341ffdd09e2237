"""Applying migrations (Alembic) from the CLI, `serve` and tests."""

from __future__ import annotations

import asyncio
import re
import socket
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect
from sqlalchemy.engine import Connection, make_url

from salesplan.db import create_database, create_engine
from salesplan.kit.events import EventHandlers
from salesplan.kit.uow import UnitOfWork

if TYPE_CHECKING:
    from alembic.config import Config

    from salesplan.config import Settings

MIGRATIONS = Path(__file__).parent / "migrations"
# Alembic is imported where it runs: importing it is a third of a CLI command's start.


def alembic_config(database_url: str | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("file_template", "%%(year)d%%(month).2d%%(day).2d_%%(slug)s")
    if database_url:
        cfg.attributes["database_url"] = database_url
    return cfg


def upgrade(database_url: str, revision: str = "head") -> int:
    """Apply migrations (runs its own event loop: call it outside one); answers how many
    revisions were applied (0: the database was up to date)."""
    from alembic import command

    cfg = alembic_config(database_url)
    applied: list[str] = []
    cfg.attributes["on_version_apply"] = lambda **kw: applied.append(str(kw["step"].up_revision_id))
    command.upgrade(cfg, revision)
    return len(applied)


def upgrade_connection(connection: Connection, revision: str = "head") -> None:
    """Apply migrations on a sync connection (from `AsyncConnection.run_sync`)."""
    from alembic import command

    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


def is_current(connection: Connection) -> bool:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    current = MigrationContext.configure(connection).get_current_revision()
    return bool(current == head)


_REVISION = re.compile(r"^revision\b[^=]*=\s*[\"']([0-9a-f]+)[\"']", re.M)
_DOWN = re.compile(r"^down_revision\b[^=]*=\s*(.+)$", re.M)


def script_heads() -> set[str]:
    """The head revisions of the migration scripts, read as text (what Alembic's script
    directory answers, without importing Alembic)."""
    revisions: set[str] = set()
    below: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("*.py"):
        text = script.read_text()
        found = _REVISION.search(text)
        if found:
            revisions.add(found.group(1))
        for down in _DOWN.findall(text):
            below.update(re.findall(r"[0-9a-f]{6,}", down))
    return revisions - below


def script_revisions() -> set[str]:
    """Every revision id of the migration scripts, read as text."""
    found = (_REVISION.search(s.read_text()) for s in (MIGRATIONS / "versions").glob("*.py"))
    return {match.group(1) for match in found if match}


def sqlite_is_current(database_url: str) -> bool:
    """Whether a SQLite database is at the scripts' head, read with the standard library: a
    command on an up-to-date embedded database then never imports Alembic. False whenever
    unsure (no file yet, no version table, anything unexpected): Alembic then decides."""
    try:
        path = make_url(database_url).database
        if not path or path == ":memory:" or not Path(path).is_file():
            return False
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            recorded = {row[0] for row in db.execute("SELECT version_num FROM alembic_version")}
        db.close()
    except Exception:
        return False
    heads = script_heads()
    return bool(heads) and recorded == heads


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception, its causes and the driver's own error (SQLAlchemy's `orig`)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [item.__cause__, item.__context__, getattr(item, "orig", None)]
    return seen


def missing_folder(database_url: str) -> str | None:
    """A SQLite file in a folder that does not exist (checked before aiosqlite trips on it)."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    folder = Path(url.database).expanduser().parent
    if folder.is_dir():
        return None
    return f"cannot open the SQLite database {url.database}: create the folder {folder}."


def connection_problem(exc: BaseException, database_url: str) -> str | None:
    """One line saying what to do when the database cannot be reached, else None."""
    url = make_url(database_url)
    texts = " ".join(str(e) for e in _chain(exc))
    if url.get_backend_name() == "sqlite":
        if "unable to open database file" in texts:
            folder = Path(url.database or ".").expanduser().parent
            return f"cannot open the SQLite database {url.database}: create the folder {folder}."
        if "file is not a database" in texts:
            return f"{url.database} is not a SQLite database: check SALESPLAN_DATABASE_URL."
        return None
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    name = url.database or "postgres"
    if any(type(e).__name__ == "InvalidCatalogNameError" for e in _chain(exc)) or (
        f'database "{name}" does not exist' in texts
    ):
        user = f" -U {url.username}" if url.username else ""
        return (
            f'database "{name}" does not exist on {where}: create it first, e.g. '
            f"createdb -h {url.host or 'localhost'} -p {url.port or 5432}{user} {name} "
            "(see docs/deployment.md)."
        )
    chain = _chain(exc)
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or (
        "Connect call failed" in texts
    ):
        return f"cannot connect to PostgreSQL at {where}: is it running?"
    if any(isinstance(e, socket.gaierror) for e in chain):
        return f"cannot find the PostgreSQL host {url.host!r}: check SALESPLAN_DATABASE_URL."
    if any(isinstance(e, TimeoutError) for e in chain):
        return f"PostgreSQL at {where} did not answer in time: is it reachable from here?"
    if "password authentication failed" in texts:
        return f"PostgreSQL at {where} refused the user or password of SALESPLAN_DATABASE_URL."
    if any(type(e).__name__ == "UndefinedTableError" for e in chain):
        return f'database "{name}" on {where} has no tables yet: run `salesplan migrate` first.'
    return None


def _where(database_url: str) -> tuple[str, str]:
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return str(url.database), ""
    return f'"{url.database or "postgres"}"', f" on {url.host or 'localhost'}:{url.port or 5432}"


def schema_problem(settings: Settings) -> str | None:
    """`serve` and `worker` before they start: one line saying what to do when the database is
    missing, unreachable, without tables or behind the scripts (they never migrate a PostgreSQL
    database, and the worker never creates or migrates a SQLite one), else None. A database at a
    revision these scripts do not know (a newer release migrated it), or with tables and no
    version record, is left to run."""
    database_url = settings.database_url
    name, where = _where(database_url)
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        folder = missing_folder(database_url)
        if folder:
            return folder
        if not url.database or url.database == ":memory:":
            return None
        if not Path(url.database).expanduser().is_file():
            return f"there is no database at {name} yet: run `salesplan migrate` first."
    try:
        recorded = asyncio.run(_recorded_revisions(settings))
    except Exception as exc:
        problem = connection_problem(exc, database_url)
        if problem is None:
            raise
        return problem
    if recorded is None:
        return f"database {name}{where} has no tables yet: run `salesplan migrate` first."
    heads = script_heads()
    if recorded and recorded != heads and recorded <= script_revisions():
        return (
            f"database {name}{where} is at revision {', '.join(sorted(recorded))}, not "
            f"{', '.join(sorted(heads))}: run `salesplan migrate` first."
        )
    return None


async def _recorded_revisions(settings: Settings) -> set[str] | None:
    """The revisions the database records (Alembic reads its version table); None when it has
    no table at all. Tables without a version record (a schema made by hand, or by the tests'
    `create_all`) answer an empty set."""
    from alembic.runtime.migration import MigrationContext

    def heads(connection: Connection) -> set[str] | None:
        if not inspect(connection).get_table_names():
            return None
        return set(MigrationContext.configure(connection).get_current_heads())

    engine = create_engine(settings)
    try:
        async with UnitOfWork(create_database(engine, EventHandlers()), read_only=True) as uow:
            return await (await uow.reader()).run_sync(heads)
    finally:
        await engine.dispose()
