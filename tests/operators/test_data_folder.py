"""§15 "The CLI says where it works": without SALESPLAN_DATABASE_URL the embedded database and
the secret live in one data folder whatever the current directory, every admin command names
its database on stderr, and a `./salesplan.db` of an older version is pointed at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from tests.foundation.test_cli import cli_db, invoke, run_cli  # noqa: F401 - fixture reused


def operator_env(home: Path, data_dir: Path | None) -> dict[str, str | None]:
    """No SALESPLAN_* setting but the data folder's (when given), HOME a folder of the test."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SALESPLAN_")}
    env["HOME"] = str(home)
    if data_dir is not None:
        env["SALESPLAN_DATA_DIR"] = str(data_dir)
    return env


def embedded(
    home: Path, cwd: Path, *args: str, data_dir: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """The command as an operator runs it, from `cwd`, in a process of its own: the default
    data folder is found from the HOME of a new process."""
    env = {k: v for k, v in (os.environ | operator_env(home, data_dir)).items() if v is not None}
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def embedded_here(
    home: Path, cwd: Path, *args: str, data_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`embedded`, run in this process (tests/foundation/test_cli.py `invoke`)."""
    cwd.mkdir(parents=True, exist_ok=True)
    return invoke(*args, env=operator_env(home, data_dir), cwd=cwd)


def ok(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_commands_from_any_folder_meet_in_the_home_data_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    org = ok(embedded(home, tmp_path / "one", "admin", "create-org", "--name", "Initech"))
    # Another folder: the same database (it answered "Organization not found" before), and
    # the secret the inbound e-mail secret is sealed with is the same one too.
    first = embedded(home, tmp_path / "two", "admin", "inbound-secret", "--org", org["id"])
    again = embedded(home, tmp_path / "three", "admin", "inbound-secret", "--org", org["id"])
    assert ok(first)["secret"] == ok(again)["secret"]
    folder = home / ".local" / "share" / "salesplan"
    assert (folder / "salesplan.db").is_file() and (folder / "salesplan.secret").is_file()
    assert oct((folder / "salesplan.secret").stat().st_mode & 0o777) == "0o600"
    for where in ("one", "two", "three"):
        assert list((tmp_path / where).iterdir()) == [], where
    assert f"database: sqlite+aiosqlite:///{folder / 'salesplan.db'}" in first.stderr


def test_salesplan_data_dir_moves_the_folder_and_is_created_on_first_use(tmp_path: Path) -> None:
    data = tmp_path / "not" / "yet" / "there"
    created = embedded_here(tmp_path / "home", tmp_path / "a", "admin", "create-org",
                            "--name", "Hooli", data_dir=data)  # fmt: skip
    org = ok(created)
    listed = embedded_here(tmp_path / "home", tmp_path / "b", "admin", "list-users",
                           "--org", org["id"], data_dir=data)  # fmt: skip
    assert ok(listed) == []
    assert (data / "salesplan.db").is_file()
    assert not (tmp_path / "home" / ".local").exists()
    assert f"database: sqlite+aiosqlite:///{data / 'salesplan.db'}" in listed.stderr


def test_a_database_left_in_the_current_folder_is_pointed_at(tmp_path: Path) -> None:
    old = tmp_path / "checkout"
    old.mkdir()
    (old / "salesplan.db").write_bytes(b"")
    (old / "salesplan.secret").write_text("old-secret")
    data = tmp_path / "data"
    result = embedded_here(tmp_path / "home", old, "admin", "list-users", data_dir=data)
    assert result.returncode == 0, result.stderr
    note = " ".join(result.stderr.split())
    assert f"{old / 'salesplan.db'} is not used" in note and str(data) in note
    assert f"mv {old / 'salesplan.db'}* {old / 'salesplan.secret'} {data}/" in note
    assert f"SALESPLAN_DATABASE_URL=sqlite+aiosqlite:///{old / 'salesplan.db'}" in note
    # Said, not done: the old file is where it was.
    assert (old / "salesplan.db").read_bytes() == b""
    elsewhere = embedded_here(tmp_path / "home", tmp_path / "other", "admin", "list-users",
                              data_dir=data)  # fmt: skip
    assert "is not used" not in elsewhere.stderr


async def test_every_admin_command_names_its_database(cli_db: str) -> None:  # noqa: F811
    shown = make_url(cli_db).render_as_string(hide_password=True)
    org = run_cli(cli_db, "admin", "create-org", "--name", "Globex")
    assert f"database: {shown}" in org.stderr.splitlines()
    org_id = json.loads(org.stdout)["id"]
    for args in (
        ["admin", "list-users"],
        ["admin", "list-api-keys"],
        ["admin", "list-oauth-apps"],
        ["admin", "inbound-secret", "--org", org_id],
        ["demo"],
    ):
        result = run_cli(cli_db, *args)
        assert result.returncode == 0, result.stderr
        assert result.stderr.splitlines().count(f"database: {shown}") == 1, (args, result.stderr)
        json.loads(result.stdout)  # stdout stays the JSON alone
    # A command that failed in the database still says which database it was.
    missing = run_cli(
        cli_db, "admin", "inbound-secret", "--org", "00000000-0000-4000-8000-0000000000ff"
    )
    assert missing.returncode == 1 and f"database: {shown}" in missing.stderr


def test_a_postgresql_password_is_never_shown(tmp_path: Path) -> None:
    url = "postgresql+asyncpg://salesplan:hunter2-secret@127.0.0.1:1/salesplan"
    for args in (["migrate"], ["admin", "list-users"]):
        result = run_cli(url, *args)
        assert result.returncode == 1
        assert "hunter2" not in result.stderr + result.stdout
