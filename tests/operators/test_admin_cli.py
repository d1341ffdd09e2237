"""The admin CLI an operator needs: ids to pass along, lists and revocations, passwords, the
version, and help in plain words."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import uuid
from typing import Any

import httpx

from salesplan import __version__
from salesplan.auth.tokens import principal_cache
from tests.foundation.test_cli import cli_db, run_cli  # noqa: F401 - fixture reused
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
    result = run_cli(cli_db, "--version")
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
    assert both["grant_types"] == "authorization_code client_credentials"


def test_help_names_no_python_types() -> None:
    for command in (
        [], ["admin"], ["serve"], ["import", "accounts"], ["import", "contacts"],
        ["admin", "set-integration"], ["admin", "inbound-secret"],
        ["admin", "create-api-key"], ["admin", "create-oauth-app"],
        ["admin", "create-user"], ["admin", "set-password"], ["admin", "list-api-keys"],
    ):  # fmt: skip
        result = subprocess.run(
            [sys.executable, "-m", "salesplan.cli", *command, "--help"],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
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
