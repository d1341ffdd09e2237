"""`salesplan migrate` against a database that cannot be opened: one line saying what to do."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.foundation.test_cli import run_cli


def one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


async def test_migrate_on_a_missing_database_says_how_to_create_it(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        return  # SQLite creates its file; the folder case is below
    name = f"salesplan_missing_{uuid.uuid4().hex[:8]}"
    missing = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    result = run_cli(missing, "migrate")
    assert result.returncode == 1
    line = one_line_error(result.stderr)
    assert f'database "{name}" does not exist' in line and "createdb" in line and name in line


async def test_migrate_on_a_sqlite_file_in_a_missing_folder_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such"
    result = run_cli(f"sqlite+aiosqlite:///{folder / 'salesplan.db'}", "migrate")
    assert result.returncode == 1
    line = one_line_error(result.stderr)
    assert "create the folder" in line and str(folder) in line


def revisions() -> int:
    from alembic.script import ScriptDirectory

    from salesplan.migrate import alembic_config

    return len(list(ScriptDirectory.from_config(alembic_config()).walk_revisions()))


async def test_migrate_says_how_many_revisions_it_applied(empty_database_url: str) -> None:
    first = run_cli(empty_database_url, "migrate")
    assert first.returncode == 0, first.stderr
    count = revisions()
    assert f"applied {count} revisions" in first.stderr
    assert "up to date" not in first.stderr
    again = run_cli(empty_database_url, "migrate")
    assert again.returncode == 0, again.stderr
    assert "database is up to date" in again.stderr and "applied" not in again.stderr


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_postgresql_connection_is_one_line_for_every_command() -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/salesplan"
    for args in (
        ["migrate"],
        ["admin", "list-users"],
        ["admin", "create-org", "--name", "Acme"],
        ["demo"],
    ):
        result = run_cli(url, *args)
        assert result.returncode == 1, args
        line = one_line_error(result.stderr)
        assert line.startswith("error: cannot connect to PostgreSQL at 127.0.0.1:"), line
        assert "is it running?" in line


async def test_admin_commands_on_a_missing_postgresql_database_say_how_to_create_it(
    database_url: str,
) -> None:
    if not database_url.startswith("postgresql"):
        return  # SQLite creates its file; see the folder case
    name = f"salesplan_missing_{uuid.uuid4().hex[:8]}"
    missing = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    for args in (["admin", "list-users"], ["admin", "create-org", "--name", "Acme"], ["demo"]):
        result = run_cli(missing, *args)
        assert result.returncode == 1, args
        line = one_line_error(result.stderr)
        assert line.startswith("error:") and f'database "{name}" does not exist' in line
        assert "createdb" in line


async def test_admin_commands_on_an_unmigrated_database_say_to_migrate(
    empty_database_url: str,
) -> None:
    if not empty_database_url.startswith("postgresql"):
        return  # the embedded SQLite database is migrated by every command
    result = run_cli(empty_database_url, "admin", "list-users")
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if not line.startswith("database:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("error:") and "salesplan migrate" in lines[0]


async def test_admin_commands_on_a_sqlite_file_in_a_missing_folder_say_so(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    result = run_cli(f"sqlite+aiosqlite:///{folder / 'salesplan.db'}", "admin", "list-users")
    assert result.returncode == 1
    line = one_line_error(result.stderr)
    assert line.startswith("error:") and "create the folder" in line and str(folder) in line
    assert not folder.exists()
