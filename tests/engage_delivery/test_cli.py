"""`salesplan admin set-integration` and `salesplan admin inbound-secret` (contract §11)."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.models.engage_delivery import OrganizationIntegration
from tests.foundation.test_cli import cli_db, run_cli

__all__ = ["cli_db"]


async def test_inbound_secret_is_created_once_and_stored_encrypted(cli_db: str) -> None:
    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Initech").stdout)["id"]
    first = run_cli(cli_db, "admin", "inbound-secret", "--org", org)
    assert first.returncode == 0, first.stderr
    secret = json.loads(first.stdout)["secret"]
    assert len(secret) >= 32
    again = json.loads(run_cli(cli_db, "admin", "inbound-secret", "--org", org).stdout)
    assert again["secret"] == secret
    engine = create_async_engine(cli_db)
    async with engine.connect() as conn:
        stored = (
            await conn.execute(select(OrganizationIntegration.inbound_secret_encrypted))
        ).scalar_one()
    await engine.dispose()
    assert secret.encode() not in stored


async def test_set_integration_stores_the_slack_fields(cli_db: str) -> None:
    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Hooli").stdout)["id"]
    url = "https://hooks.slack.com/services/T000/B000/XXXX"
    result = run_cli(
        cli_db,
        "admin",
        "set-integration",
        "--org",
        org,
        "--slack-webhook-url",
        url,
        "--slack-signing-secret",
        "s3cr3t",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == {"organizationId": org, "slackWebhookUrl": True, "slackSigningSecret": True}
    assert url not in result.stdout and "s3cr3t" not in result.stdout


async def test_set_integration_of_an_unknown_organization_fails(cli_db: str) -> None:
    result = run_cli(
        cli_db, "admin", "set-integration", "--org", str(uuid.uuid4()), "--slack-webhook-url", "x"
    )
    assert result.returncode != 0
    assert "not found" in result.stderr.lower()
