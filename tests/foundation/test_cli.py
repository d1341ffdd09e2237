"""The admin CLI: JSON when piped, clear errors with a non-zero exit, an idempotent demo.

Also the two ways the CLI tests run a command. `run_cli` (and `invoke`) run it in this process,
as a new process would run it: a process spends 1 to 2 s importing before the command starts, and
the CLI tests run some hundred commands. `run_cli_process` runs it in a real process, for what
only a process shows (a terminal, the data folder of a HOME, the entry point itself)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import traceback
import uuid
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TextIO

import click
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

CLI_SECRET = "cli-test-secret"


def _database_env(database_url: str, env: Mapping[str, str | None] | None) -> dict[str, str | None]:
    return {
        "SALESPLAN_DATABASE_URL": database_url,
        "SALESPLAN_SECRET_KEY": CLI_SECRET,
        **(env or {}),
    }


def run_cli(
    database_url: str, *args: str, env: Mapping[str, str | None] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`salesplan ARGS` on `database_url`, in this process (see `invoke`)."""
    return invoke(*args, env=_database_env(database_url, env), stdin=stdin)


def run_cli_process(
    database_url: str, *args: str, env: Mapping[str, str | None] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`salesplan ARGS` on `database_url`, in a process of its own (`python -m salesplan.cli`)."""
    merged = dict(os.environ)
    for name, value in _database_env(database_url, env).items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=merged,
        timeout=120,
        check=False,
    )


@functools.cache
def _command() -> click.Command:
    import typer.main

    from salesplan.cli import app

    return typer.main.get_command(app)


def invoke(
    *args: str,
    env: Mapping[str, str | None] | None = None,
    stdin: str = "",
    cwd: Path | None = None,
    stdout: TextIO | None = None,
) -> subprocess.CompletedProcess[str]:
    """`salesplan ARGS` run in this process as a new process would run it: `env` over this
    process's environment (None removes a variable), in `cwd`, `stdin` as its standard input,
    stdout and stderr captured (not terminals, as when piped; `stdout` may be a terminal's file
    instead), with what the CLI keeps for its process new (the database it said it uses, its
    stderr console), log records of WARNING and above on stderr (as Python prints them when
    nothing set logging up), and an exception's traceback on stderr with exit 1. The command
    runs in a thread: it runs its own event loop, and an async test is inside one."""
    from rich.console import Console

    out = stdout if stdout is not None else io.StringIO()
    err = io.StringIO()
    command = _command()
    code = 0

    def run() -> None:
        nonlocal code
        try:
            command.main(list(args), prog_name="salesplan")
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=err)
                code = 1
        except Exception:
            err.write(traceback.format_exc())
            code = 1

    cli_modules = [
        m for name, m in sys.modules.items() if name.split(".")[:2] == ["salesplan", "cli"]
    ]
    consoles = {m: m.err for m in cli_modules if isinstance(getattr(m, "err", None), Console)}
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    logging.getLogger().addHandler(last_resort)
    try:
        for name, value in (env or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
        fresh = Console(stderr=True)  # a new process's: its stderr is not a terminal
        for module in consoles:
            module.err = fresh  # type: ignore[attr-defined]
        from salesplan.cli import support

        support._announced.clear()
        thread = threading.Thread(target=run, name="salesplan-cli")
        thread.start()
        thread.join()
        out.flush()
    finally:
        logging.getLogger().removeHandler(last_resort)
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for module, console in consoles.items():
            module.err = console  # type: ignore[attr-defined]
    printed = out.getvalue() if isinstance(out, io.StringIO) else ""
    return subprocess.CompletedProcess(["salesplan", *args], code, printed, err.getvalue())


@contextlib.asynccontextmanager
async def migrated_template(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A database of the run's engine migrated by `salesplan migrate`, which `cli_db` hands
    out (conftest's session fixture `cli_template`): migrating an empty database costs seconds,
    copying or emptying a migrated one milliseconds. (The embedded database being migrated by
    the first command is tested with a new data folder, in tests/operators/test_data_folder.py,
    and `migrate` itself in tests/operators/test_migrate.py.)"""
    if not database_url.startswith("postgresql"):
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('cli') / 'template.db'}"
        result = run_cli(url, "migrate")
        assert result.returncode == 0, result.stderr
        yield url
        return
    async with _postgres_database(database_url) as url:
        result = run_cli(url, "migrate")
        assert result.returncode == 0, result.stderr
        yield url


@contextlib.asynccontextmanager
async def _postgres_database(beside: str) -> AsyncIterator[str]:
    """A new, empty PostgreSQL database on the server of `beside`, dropped afterwards."""
    base = make_url(beside)
    name = f"salesplan_c_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield base.set(database=name).render_as_string(hide_password=False)
        finally:
            async with admin.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()


async def _delete_all_rows(database_url: str) -> None:
    """Every table's rows deleted, children first (as conftest's `app` fixture does)."""
    from tests.conftest import delete_all_rows

    engine = create_async_engine(database_url)
    try:
        await delete_all_rows(engine)
    finally:
        await engine.dispose()


@pytest.fixture
async def cli_db(cli_template: str, tmp_path: Path) -> AsyncIterator[str]:
    """A migrated database with nothing in it: on SQLite a copy of the template of the test's
    own (beside it, `serve` notes its origin); on PostgreSQL the template, its rows deleted
    after the test (creating and dropping a database costs a second or two)."""
    if not cli_template.startswith("postgresql"):
        copy = tmp_path / "empty.db"
        shutil.copyfile(make_url(cli_template).database or "", copy)
        yield f"sqlite+aiosqlite:///{copy}"
        return
    # PostgreSQL is migrated explicitly, as an operator would (nothing left to apply here).
    result = run_cli(cli_template, "migrate")
    assert result.returncode == 0, result.stderr
    try:
        yield cli_template
    finally:
        await _delete_all_rows(cli_template)


async def test_admin_commands_print_json_and_create_a_working_key(cli_db: str) -> None:
    org = run_cli(cli_db, "admin", "create-org", "--name", "Globex")
    assert org.returncode == 0, org.stderr
    org_id = json.loads(org.stdout)["id"]
    user = run_cli(
        cli_db,
        "admin",
        "create-user",
        "--org",
        org_id,
        "--email",
        "Hank@Globex.com",
        "--password",
        "pw-123456-passphrase",
        "--role",
        "admin",
        "--name",
        "Hank",
    )
    assert user.returncode == 0, user.stderr
    user_id = json.loads(user.stdout)["id"]
    key = run_cli(
        cli_db,
        "admin",
        "create-api-key",
        "--user",
        user_id,
        "--scope",
        "organizations:read",
        "--scope",
        "plans:read",
    )
    assert key.returncode == 0, key.stderr
    created = json.loads(key.stdout)
    assert created["key"].startswith("sp_live_") and created["id"]
    assert created["scopes"] == ["organizations:read", "plans:read"]


async def test_duplicate_email_in_org_is_a_clear_error(cli_db: str) -> None:
    org_id = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Initech").stdout)["id"]
    args = (
        "admin",
        "create-user",
        "--org",
        org_id,
        "--email",
        "p@initech.com",
        "--password",
        "x1234567-passphrase",
    )
    assert run_cli(cli_db, *args).returncode == 0
    again = run_cli(cli_db, *args)
    assert again.returncode == 1
    assert "already a member" in again.stderr


async def test_unknown_org_is_a_clear_error(cli_db: str) -> None:
    result = run_cli(
        cli_db,
        "admin",
        "create-user",
        "--org",
        "00000000-0000-4000-8000-000000000000",
        "--email",
        "a@b.co",
        "--password",
        "x1234567-passphrase",
    )
    assert result.returncode == 1 and "Organization not found" in result.stderr
    bad = run_cli(cli_db, "admin", "create-user", "--org", "acme", "--email", "a@b.co")
    assert bad.returncode == 1 and "must be a UUID" in bad.stderr


async def test_unknown_scope_is_a_clear_error(cli_db: str) -> None:
    org_id = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Umbrella").stdout)["id"]
    user_id = json.loads(
        run_cli(
            cli_db,
            "admin",
            "create-user",
            "--org",
            org_id,
            "--email",
            "u@umbrella.com",
            "--password",
            "x1234567-passphrase",
        ).stdout
    )["id"]
    result = run_cli(cli_db, "admin", "create-api-key", "--user", user_id, "--scope", "root:all")
    assert result.returncode == 1 and "root:all" in result.stderr


async def test_demo_is_idempotent_and_prints_a_key(cli_db: str) -> None:
    first = run_cli(cli_db, "demo")
    assert first.returncode == 0, first.stderr
    one = json.loads(first.stdout)
    second = json.loads(run_cli(cli_db, "demo").stdout)
    assert one["loaded"] is True and second["loaded"] is False
    assert one["organizationId"] == second["organizationId"]
    assert one["apiKey"] != second["apiKey"] and second["apiKey"].startswith("sp_live_")
    assert one["email"] and one["password"] and one["signIn"].endswith("/login")


# What a command that only reads must not import to start at once (issue 44: `admin list-users`
# under a second): the web framework and the app's event wiring (every domain's handlers).
WEB_STACK = ("fastapi", "starlette", "salesplan.events", "salesplan.app")


def test_listing_users_starts_without_the_web_stack(cli_db: str) -> None:
    org = run_cli(cli_db, "admin", "create-org", "--name", "Initech")
    assert org.returncode == 0, org.stderr
    env = dict(os.environ) | _database_env(cli_db, None)
    listed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "salesplan.cli", "admin", "list-users"],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if v is not None},
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in listed.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "salesplan.organizations.repository" in imported  # the trace is the command's
    assert not {m for m in imported if m.split(".")[0] in WEB_STACK or m in WEB_STACK}
    # typer's rich renderer of errors and help: imported when one is printed, not at start
    assert "typer.rich_utils" not in imported
