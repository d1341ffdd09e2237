"""`serve` and `worker` on a database they cannot use: one `error: …` line and exit 1, at start
— never a server that answers 500 to everything, nor a worker that logs tracebacks forever.

Each runs the real command in a process of its own (a server or a worker that does not stop is
the defect: the process is killed after a deadline and the test fails)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.foundation.test_cli import CLI_SECRET

DEADLINE = 40  # seconds: the command must have exited by then


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(database_url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env |= {
        "SALESPLAN_DATABASE_URL": database_url,
        "SALESPLAN_SECRET_KEY": CLI_SECRET,
        "SALESPLAN_DATA_DIR": str(cwd / "data"),
    }
    try:
        return subprocess.run(
            [sys.executable, "-m", "salesplan.cli", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stderr or b"")[-2000:]
        pytest.fail(f"`salesplan {' '.join(args)}` still running after {DEADLINE} s: {tail!r}")


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], result.stderr[-3000:]
    assert len(lines) <= 2, result.stderr  # at most the `database: …` line before it
    assert result.returncode == 1
    return errors[0]


def test_worker_on_a_missing_sqlite_database_exits_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "never-made.db"
    line = one_error_line(run(f"sqlite+aiosqlite:///{path}", "worker", cwd=tmp_path))
    assert "run `salesplan migrate` first" in line and str(path) in line
    assert not path.exists()  # the worker creates no database


def test_worker_on_an_empty_sqlite_file_exits_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    line = one_error_line(run(f"sqlite+aiosqlite:///{path}", "worker", cwd=tmp_path))
    assert "run `salesplan migrate` first" in line and str(path) in line


def test_worker_on_an_unmigrated_database_exits_with_one_line(
    empty_database_url: str, tmp_path: Path
) -> None:
    """The empty database of the engine under test (an empty PostgreSQL database on PG runs)."""
    if empty_database_url.startswith("sqlite"):
        Path(empty_database_url.partition(":///")[2]).touch()
    line = one_error_line(run(empty_database_url, "worker", cwd=tmp_path))
    assert "run `salesplan migrate` first" in line


def test_serve_on_an_unmigrated_postgresql_database_exits_with_one_line(
    empty_database_url: str, tmp_path: Path
) -> None:
    if empty_database_url.startswith("sqlite"):
        pytest.skip("serve migrates the embedded SQLite database itself (contract §10)")
    result = run(empty_database_url, "serve", "--port", str(free_port()), cwd=tmp_path)
    line = one_error_line(result)
    assert "has no tables yet: run `salesplan migrate` first" in line


def test_worker_and_serve_on_a_missing_postgresql_database_say_so(
    database_url: str, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("PostgreSQL only: SQLite's missing file is the test above")
    from sqlalchemy.engine import make_url

    missing = make_url(database_url).set(database="salesplan_never_created")
    url = missing.render_as_string(hide_password=False)
    for args in (["worker"], ["serve", "--port", str(free_port())]):
        line = one_error_line(run(url, *args, cwd=tmp_path))
        assert 'database "salesplan_never_created" does not exist' in line, args


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_refused_postgresql_server_is_said_at_start(command: str, tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/salesplan"
    args = [command] + (["--port", str(free_port())] if command == "serve" else [])
    line = one_error_line(run(url, *args, cwd=tmp_path))
    assert line.startswith("error: cannot connect to PostgreSQL at 127.0.0.1:"), line


def test_worker_on_a_database_behind_the_migrations_says_to_migrate(
    empty_database_url: str, tmp_path: Path
) -> None:
    from alembic.script import ScriptDirectory

    from salesplan.migrate import alembic_config, upgrade

    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_revision(script.get_current_head())
    assert head is not None and isinstance(head.down_revision, str)
    upgrade(empty_database_url, head.down_revision)
    line = one_error_line(run(empty_database_url, "worker", cwd=tmp_path))
    assert f"is at revision {head.down_revision}, not {head.revision}" in line
    assert "run `salesplan migrate` first" in line
