"""`salesplan admin create-oauth-app` (contract §11)."""

from __future__ import annotations

import base64
import json

import httpx

from tests.foundation.test_cli import cli_db, run_cli  # noqa: F401 - fixture reused


async def test_create_oauth_app_prints_credentials_that_work(
    cli_db: str,  # noqa: F811
) -> None:
    org_id = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Initech").stdout)["id"]
    user = run_cli(
        cli_db, "admin", "create-user", "--org", org_id, "--email", "peter@initech.com",
        "--password", "pw-123456-passphrase",
    )  # fmt: skip
    user_id = json.loads(user.stdout)["id"]
    result = run_cli(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "Nightly export",
        "--scope", "organizations:read", "--scope", "accounts:read", "--org", org_id,
        "--grant", "client_credentials",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    creds = json.loads(result.stdout)
    assert set(creds) >= {"client_id", "client_secret"}

    from salesplan.app import create_app
    from salesplan.config import Settings

    app = create_app(Settings(database_url=cli_db, secret_key="cli-test-secret", _env_file=None))  # type: ignore[call-arg]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            basic = base64.b64encode(f"{creds['client_id']}:{creds['client_secret']}".encode())
            token = await client.post(
                "/api/v1/oauth/token",
                data={"grant_type": "client_credentials", "scope": "organizations:read"},
                headers={"Authorization": "Basic " + basic.decode()},
            )
            assert token.status_code == 200, token.text
            orgs = await client.get(
                "/api/v1/organizations",
                headers={"Authorization": "Bearer " + token.json()["access_token"]},
            )
            assert [o["id"] for o in orgs.json()["data"]] == [org_id]
            code = await client.post(
                "/api/v1/oauth/token",
                data={"grant_type": "authorization_code", "code": "x"},
                headers={"Authorization": "Basic " + basic.decode()},
            )
            assert code.json()["error"] == "unauthorized_client"


async def test_create_oauth_app_refuses_unknown_scopes_and_grants(cli_db: str) -> None:  # noqa: F811
    org_id = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Hooli").stdout)["id"]
    user = run_cli(
        cli_db, "admin", "create-user", "--org", org_id, "--email", "gavin@hooli.com",
        "--password", "pw-123456-passphrase",
    )  # fmt: skip
    user_id = json.loads(user.stdout)["id"]
    bad_scope = run_cli(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "X", "--scope", "root"
    )
    assert bad_scope.returncode != 0
    bad_grant = run_cli(
        cli_db, "admin", "create-oauth-app", "--user", user_id, "--name", "X", "--grant", "password"
    )
    assert bad_grant.returncode != 0
