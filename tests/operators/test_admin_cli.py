"""The admin CLI an operator needs: ids to pass along, lists and revocations, passwords, the
version, and help in plain words."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
import uuid
from typing import Any

import httpx

from salesplan import __version__
from salesplan.auth.tokens import principal_cache
from tests.foundation.test_cli import (  # noqa: F401 - fixtures reused
    CLI_SECRET,
    cli_db,
    invoke,
    run_cli,
    run_cli_process,
)
from tests.oauth.flow import sign_in

PASSPHRASE = "correct horse battery"


def ok(database_url: str, *args: str) -> Any:
    result = run_cli(database_url, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def org_and_user(db_url: str, email: str = "ops@initech.com") -> tuple[str, str]:
    org_id = ok(db_url, "admin", "create-org", "--name", "Initech")["id"]
    user = ok(
        db_url, "admin", "create-user", "--org", org_id, "--email", email,
        "--password", PASSPHRASE,
    )  # fmt: skip
    return org_id, user["id"]


async def api(db_url: str, method: str, path: str, key: str, **kwargs: Any) -> httpx.Response:
    from salesplan.app import create_app
    from salesplan.config import Settings

    app = create_app(Settings(database_url=db_url, secret_key="cli-test-secret", _env_file=None))  # type: ignore[call-arg]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.request(
                method, path, headers={"Authorization": f"Bearer {key}"}, **kwargs
            )


async def test_demo_prints_the_user_id_that_admin_commands_take(cli_db: str) -> None:  # noqa: F811
    demo = ok(cli_db, "demo")
    users = ok(cli_db, "admin", "list-users")
    assert demo["userId"] in {u["id"] for u in users}
    key = ok(cli_db, "admin", "create-api-key", "--user", demo["userId"], "--name", "second")
    assert key["key"].startswith("sp_live_")


async def test_version_prints_the_package_version(cli_db: str) -> None:  # noqa: F811
    result = run_cli_process(cli_db, "--version")  # the entry point itself, in a process
    assert result.returncode == 0 and result.stdout.strip() == f"salesplan {__version__}"


async def test_passwords_need_twelve_characters_and_nothing_else(cli_db: str) -> None:  # noqa: F811
    org_id = ok(cli_db, "admin", "create-org", "--name", "Hooli")["id"]
    short = run_cli(
        cli_db, "admin", "create-user", "--org", org_id, "--email", "a@hooli.com",
        "--password", "abc",
    )  # fmt: skip
    assert short.returncode == 1 and "at least 12 characters" in short.stderr
    assert ok(cli_db, "admin", "list-users", "--org", org_id) == []
    # Twelve lowercase letters and spaces: no composition rules.
    ok(
        cli_db, "admin", "create-user", "--org", org_id, "--email", "a@hooli.com",
        "--password", "all lowercase",
    )  # fmt: skip


async def test_list_users_shows_ids_emails_and_roles(cli_db: str) -> None:  # noqa: F811
    org_id, user_id = org_and_user(cli_db)
    users = ok(cli_db, "admin", "list-users", "--org", org_id)
    assert users == [
        {"id": user_id, "email": "ops@initech.com", "name": "ops", "roles": [f"{org_id}:member"]}
    ]


async def test_set_password_replaces_the_old_one(cli_db: str) -> None:  # noqa: F811
    _, user_id = org_and_user(cli_db)
    short = run_cli(cli_db, "admin", "set-password", "--user", user_id, "--password", "short")
    assert short.returncode == 1 and "at least 12 characters" in short.stderr
    changed = ok(
        cli_db, "admin", "set-password", "--user", user_id, "--password", "a brand new phrase"
    )
    assert changed == {"id": user_id, "email": "ops@initech.com", "passwordChanged": True}

    from salesplan.app import create_app
    from salesplan.config import Settings

    app = create_app(Settings(database_url=cli_db, secret_key="cli-test-secret", _env_file=None))  # type: ignore[call-arg]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            old = await sign_in(client, "ops@initech.com", PASSPHRASE)
            new = await sign_in(client, "ops@initech.com", "a brand new phrase")
    assert (old.status_code, new.status_code) == (401, 303)
    unknown = run_cli(
        cli_db, "admin", "set-password", "--user", "00000000-0000-4000-8000-000000000000",
        "--password", "a brand new phrase",
    )  # fmt: skip
    assert unknown.returncode == 1 and "User not found" in unknown.stderr


async def test_list_and_revoke_api_keys(cli_db: str) -> None:  # noqa: F811
    _, user_id = org_and_user(cli_db)
    created = ok(cli_db, "admin", "create-api-key", "--user", user_id, "--name", "nightly")
    assert (await api(cli_db, "GET", "/api/v1/organizations", created["key"])).status_code == 200
    keys = ok(cli_db, "admin", "list-api-keys", "--user", user_id)
    assert [(k["id"], k["name"], k["revokedAt"]) for k in keys] == [
        (created["id"], "nightly", None)
    ]
    assert created["key"] not in json.dumps(keys)
    revoked = ok(cli_db, "admin", "revoke-api-key", "--id", created["id"])
    assert revoked["id"] == created["id"] and revoked["revokedAt"]
    # This test process is "another server process": its principal cache holds the key for at
    # most its TTL (5 s) after a revocation made elsewhere; skip the wait.
    principal_cache.clear()
    assert (await api(cli_db, "GET", "/api/v1/organizations", created["key"])).status_code == 401
    missing = run_cli(
        cli_db, "admin", "revoke-api-key", "--id", "00000000-0000-4000-8000-000000000000"
    )
    assert missing.returncode == 1 and "not found" in missing.stderr


async def test_a_key_may_expire_and_is_then_listed_as_expired(cli_db: str) -> None:  # noqa: F811
    """Contract §15: --expires-in-days N; `expiresAt` in the output and the list; an expired
    key is listed as expired and answers 401 saying so."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update
    from sqlalchemy.ext.asyncio import create_async_engine

    from salesplan.models.identity import ApiKey

    _, user_id = org_and_user(cli_db)
    created = ok(
        cli_db, "admin", "create-api-key", "--user", user_id, "--expires-in-days", "30"
    )  # fmt: skip
    expires = datetime.fromisoformat(created["expiresAt"])
    assert expires.tzinfo is not None
    assert abs(expires - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=5)
    forever = ok(cli_db, "admin", "create-api-key", "--user", user_id, "--name", "forever")
    assert forever["expiresAt"] is None
    listed = {k["id"]: k for k in ok(cli_db, "admin", "list-api-keys", "--user", user_id)}
    assert listed[created["id"]]["status"] == "active"
    assert datetime.fromisoformat(listed[created["id"]]["expiresAt"]) == expires
    assert listed[forever["id"]]["expiresAt"] is None

    engine = create_async_engine(cli_db)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                update(ApiKey)
                .where(ApiKey.id == uuid.UUID(created["id"]))
                .values(expires_at=datetime.now(UTC) - timedelta(minutes=1))
            )
    finally:
        await engine.dispose()
    listed = {k["id"]: k for k in ok(cli_db, "admin", "list-api-keys", "--user", user_id)}
    assert listed[created["id"]]["status"] == "expired"
    assert listed[forever["id"]]["status"] == "active"
    principal_cache.clear()
    answer = await api(cli_db, "GET", "/api/v1/organizations", created["key"])
    assert answer.status_code == 401 and "expired" in answer.json()["error"]["message"]

    for bad in ("0", "-3", "100000"):
        refused = run_cli(
            cli_db, "admin", "create-api-key", "--user", user_id, "--expires-in-days", bad
        )
        assert refused.returncode != 0
        assert "Traceback" not in refused.stderr and refused.stderr.strip()


async def test_list_and_revoke_oauth_apps(cli_db: str) -> None:  # noqa: F811
    _, user_id = org_and_user(cli_db)
    created = ok(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Export",
        "--scope", "organizations:read",
    )  # fmt: skip
    apps = ok(cli_db, "admin", "list-oauth-apps")
    assert [(a["clientId"], a["grantTypes"], a["ownerUserId"]) for a in apps] == [
        (created["client_id"], ["client_credentials"], user_id)
    ]
    assert created["client_secret"] not in json.dumps(apps)
    revoked = ok(cli_db, "admin", "revoke-oauth-app", "--client-id", created["client_id"])
    assert revoked["revoked"] is True
    assert ok(cli_db, "admin", "list-oauth-apps") == []
    again = run_cli(cli_db, "admin", "revoke-oauth-app", "--client-id", created["client_id"])
    assert again.returncode == 1 and "not found" in again.stderr


async def test_an_authorization_code_app_needs_a_redirect_uri(cli_db: str) -> None:  # noqa: F811
    _, user_id = org_and_user(cli_db)
    refused = run_cli(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Web",
        "--grant", "authorization_code",
    )  # fmt: skip
    assert refused.returncode == 1 and "--redirect-uri" in refused.stderr
    both = ok(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Web",
        "--redirect-uri", "https://app.example.com/callback",
    )  # fmt: skip
    assert both["grantTypes"] == ["authorization_code", "client_credentials"]


def test_help_names_no_python_types() -> None:
    for command in (
        [], ["admin"], ["serve"], ["import", "accounts"], ["import", "contacts"],
        ["admin", "set-integration"], ["admin", "inbound-secret"],
        ["admin", "create-api-key"], ["admin", "create-oauth-app"],
        ["admin", "create-user"], ["admin", "set-password"], ["admin", "list-api-keys"],
    ):  # fmt: skip
        result = invoke(*command, "--help")
        assert result.returncode == 0, result.stderr
        for python_type in ("<str>", "<int>", "<bool>", "list[str]", "<list"):
            assert python_type not in result.stdout, (command, result.stdout)
    assert "--scope" in result.stdout or "--user" in result.stdout


def run_on_terminal(database_url: str, *args: str) -> str:
    """The command's output when its stdout is a terminal (a pseudo-terminal)."""
    env = os.environ | {
        "SALESPLAN_DATABASE_URL": database_url,
        "SALESPLAN_SECRET_KEY": "cli-test-secret",
        "COLUMNS": "200",
    }
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-m", "salesplan.cli", *args],
            stdout=follower, stderr=subprocess.PIPE, env=env, check=True, timeout=120,
        )  # fmt: skip
        return os.read(leader, 65536).decode()
    finally:
        os.close(leader)
        os.close(follower)


async def test_lists_are_a_table_on_a_terminal(cli_db: str) -> None:  # noqa: F811
    org_and_user(cli_db)
    output = run_on_terminal(cli_db, "admin", "list-users")
    assert "ops@initech.com" in output and "email" in output
    assert not output.lstrip().startswith("[")


# ------------------------------------------------------------------ §15 and issue 29


def run_piped(database_url: str, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(database_url, *args, stdin=stdin)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and "database:" not in line]


async def test_every_error_starts_with_the_same_lowercase_error(cli_db: str) -> None:  # noqa: F811
    _, user_id = org_and_user(cli_db)
    failures = [
        # A missing option (click's usage error), from a process: the shape the entry point gives.
        run_cli_process(cli_db, "admin", "create-org"),
        run_cli(cli_db, "admin", "create-api-key", "--user", "nope"),
        run_cli(cli_db, "admin", "create-api-key", "--user", user_id, "--scope", "root:all"),
        run_cli(cli_db, "admin", "revoke-api-key", "--id", "00000000-0000-4000-8000-000000000000"),
        run_cli(cli_db, "admin", "no-such-command"),
        run_cli(cli_db, "serve", "--port", "many"),
    ]
    for result in failures:
        assert result.returncode != 0
        lines = error_lines(result.stderr)
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: "), result.stderr
        assert "Error" not in result.stderr and "╭" not in result.stderr
    missing = error_lines(failures[0].stderr)[0]
    assert "--name" in missing and "salesplan" in missing and "--help" in missing


def test_set_password_help_does_not_call_the_password_required() -> None:
    result = invoke("admin", "set-password", "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    password = next(line for line in result.stdout.splitlines() if "--password" in line)
    user = next(line for line in result.stdout.splitlines() if "--user" in line)
    assert "required" not in password and "asked for when omitted" in password
    assert "required" in user


async def test_set_password_piped_checks_the_user_before_reading_a_password(
    cli_db: str,  # noqa: F811
) -> None:
    unknown = run_piped(
        cli_db, "", "admin", "set-password", "--user", "00000000-0000-4000-8000-000000000000"
    )
    assert unknown.returncode == 1
    assert error_lines(unknown.stderr) == [
        'error: User not found. ({"id": "00000000-0000-4000-8000-000000000000"})'
    ]
    assert "Password" not in unknown.stderr and "password:" not in unknown.stderr.lower()

    _, user_id = org_and_user(cli_db)
    changed = run_piped(cli_db, "a piped new phrase\n", "admin", "set-password", "--user", user_id)
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)["passwordChanged"] is True
    assert "Warning" not in changed.stderr and "confirmation" not in changed.stderr
    from salesplan.app import create_app
    from salesplan.config import Settings

    app = create_app(Settings(database_url=cli_db, secret_key="cli-test-secret", _env_file=None))  # type: ignore[call-arg]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            assert (
                await sign_in(client, "ops@initech.com", "a piped new phrase")
            ).status_code == 303
    short = run_piped(cli_db, "short\n", "admin", "set-password", "--user", user_id)
    assert short.returncode == 1 and "at least 12 characters" in short.stderr


async def test_demo_keeps_one_key_and_prints_no_stale_password(cli_db: str) -> None:  # noqa: F811
    runs = [ok(cli_db, "demo") for _ in range(3)]
    user_id = runs[0]["userId"]
    keys = ok(cli_db, "admin", "list-api-keys", "--user", user_id)
    live = [k for k in keys if k["revokedAt"] is None]
    assert len(live) == 1 and runs[-1]["apiKey"].startswith(live[0]["prefix"])
    principal_cache.clear()
    assert (await api(cli_db, "GET", "/api/v1/organizations", runs[0]["apiKey"])).status_code == 401
    assert (
        await api(cli_db, "GET", "/api/v1/organizations", runs[-1]["apiKey"])
    ).status_code == 200
    assert runs[-1]["password"] == "salesplan-demo"

    ok(cli_db, "admin", "set-password", "--user", user_id, "--password", "my own passphrase")
    after = run_cli(cli_db, "demo")
    assert after.returncode == 0, after.stderr
    shown = json.loads(after.stdout)
    assert shown["password"] is None and "salesplan-demo" not in after.stdout
    assert "password was changed" in after.stderr


async def test_demo_prints_the_public_url_it_is_given(cli_db: str) -> None:  # noqa: F811
    env_url = run_cli_env(cli_db, {"SALESPLAN_PUBLIC_URL": "https://crm.example.com/"}, "demo")
    assert json.loads(env_url.stdout)["signIn"] == "https://crm.example.com/login"


def run_cli_env(database_url: str, extra: dict[str, str], *args: str) -> Any:
    result = run_cli(database_url, *args, env=extra)
    assert result.returncode == 0, result.stderr
    return result


def terminal(database_url: str, columns: int, *args: str) -> str:
    """The command's screen when its stdout is a terminal `columns` wide (a pseudo-terminal's),
    run in this process; `run_on_terminal` above is the same from a process."""
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def read_screen() -> None:  # as the command writes: a full terminal would block it
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal was closed, and all of it read
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read_screen)
    reader.start()
    try:
        with open(follower, "w", encoding="utf-8", closefd=False) as screen:
            result = invoke(
                *args,
                env={
                    "SALESPLAN_DATABASE_URL": database_url,
                    "SALESPLAN_SECRET_KEY": CLI_SECRET,
                    "COLUMNS": str(columns),
                    "NO_COLOR": "1",
                },
                stdout=screen,
            )
        assert result.returncode == 0, result.stderr
    finally:
        os.close(follower)
        reader.join(timeout=30)
        os.close(leader)
    return re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())  # styles off


async def test_ids_are_never_cut_on_an_80_column_terminal(cli_db: str) -> None:  # noqa: F811
    org_id, user_id = org_and_user(cli_db)
    key = ok(cli_db, "admin", "create-api-key", "--user", user_id, "--name", "a long key name")
    app = ok(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Export",
        "--redirect-uri", "https://app.example.com/callback",
    )  # fmt: skip
    screens = {
        "users": terminal(cli_db, 80, "admin", "list-users"),
        "keys": terminal(cli_db, 80, "admin", "list-api-keys"),
        "apps": terminal(cli_db, 80, "admin", "list-oauth-apps"),
        "created": terminal(cli_db, 80, "admin", "create-api-key", "--user", user_id),
    }
    wanted = {
        "users": [user_id, org_id, "ops@initech.com"],
        "keys": [key["id"], user_id],
        "apps": [app["client_id"], user_id, "https://app.example.com/callback"],
        "created": [],
    }
    for name, screen in screens.items():
        lines = screen.splitlines()
        assert all(len(line) <= 80 for line in lines), screen
        assert "…" not in screen, screen
        for value in wanted[name]:
            assert any(value in line for line in lines), (name, value, screen)
    created_key = next(line for line in screens["created"].splitlines() if "sp_live_" in line)
    assert len(created_key.split("sp_live_")[1].split()[0]) >= 40
    assert re.search(
        r"│ id +│ [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} ", screens["created"]
    )
    # Wide enough, a list is one table with a header row.
    wide = terminal(cli_db, 200, "admin", "list-users")
    assert any("id" in line and "email" in line and "roles" in line for line in wide.splitlines())
    assert user_id in wide and org_id in wide


async def test_create_commands_print_the_shape_of_their_list_commands(
    cli_db: str,  # noqa: F811
) -> None:
    """`create-api-key` and `create-oauth-app` print the row `list-…` shows for what they made
    (camelCase, lists as arrays), plus what is shown once: the key; the app's `client_id` and
    `client_secret` (contract §11's names, the ones the token endpoint takes)."""
    _, user_id = org_and_user(cli_db)
    key = ok(cli_db, "admin", "create-api-key", "--user", user_id, "--scope", "plans:read")
    (listed,) = ok(cli_db, "admin", "list-api-keys", "--user", user_id)
    assert key == listed | {"key": key["key"]}
    assert key["scopes"] == ["plans:read"] and key["key"].startswith("sp_live_")

    app = ok(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Sync",
        "--scope", "plans:read",
    )  # fmt: skip
    (row,) = ok(cli_db, "admin", "list-oauth-apps")
    assert app == row | {"client_id": row["clientId"], "client_secret": app["client_secret"]}
    assert app["grantTypes"] == ["client_credentials"] and app["scopes"] == ["plans:read"]
