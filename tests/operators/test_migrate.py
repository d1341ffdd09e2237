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
