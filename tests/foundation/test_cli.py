"""The admin CLI: JSON when piped, clear errors with a non-zero exit, an idempotent demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def run_cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "SALESPLAN_DATABASE_URL": database_url,
        "SALESPLAN_SECRET_KEY": "cli-test-secret",
    }
    return subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
async def cli_db(empty_database_url: str) -> str:
    if empty_database_url.startswith("postgresql"):
        # PostgreSQL is migrated explicitly, as an operator would.
        result = run_cli(empty_database_url, "migrate")
        assert result.returncode == 0, result.stderr
    return empty_database_url


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
    assert created["scopes"] == "organizations:read plans:read"


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
