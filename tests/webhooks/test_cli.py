"""`salesplan admin webhooks list|create|rotate|delete` (contract §13)."""

from __future__ import annotations

import json

from tests.foundation.test_cli import cli_db, run_cli

__all__ = ["cli_db"]


async def test_admin_webhooks_create_list_rotate_delete(cli_db: str) -> None:
    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Initech").stdout)["id"]
    made = run_cli(
        cli_db,
        "admin", "webhooks", "create", "--org", org,
        "--url", "https://hooks.example.com/in", "--event-type", "account.created",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    endpoint = json.loads(made.stdout)
    assert endpoint["secret"].startswith("whsec_")
    assert endpoint["eventTypes"] == ["account.created"]
    listed = json.loads(run_cli(cli_db, "admin", "webhooks", "list", "--org", org).stdout)
    assert [e["id"] for e in listed] == [endpoint["id"]] and "secret" not in listed[0]
    rotated = run_cli(cli_db, "admin", "webhooks", "rotate", "--org", org, "--id", endpoint["id"])
    assert rotated.returncode == 0, rotated.stderr
    assert json.loads(rotated.stdout)["secret"] not in ("", endpoint["secret"])
    gone = run_cli(cli_db, "admin", "webhooks", "delete", "--org", org, "--id", endpoint["id"])
    assert gone.returncode == 0, gone.stderr
    assert json.loads(run_cli(cli_db, "admin", "webhooks", "list", "--org", org).stdout) == []


async def test_admin_webhooks_refuses_private_destinations_and_unknown_types(cli_db: str) -> None:
    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Hooli").stdout)["id"]
    private = run_cli(
        cli_db, "admin", "webhooks", "create", "--org", org, "--url", "https://10.0.0.5/in"
    )
    assert private.returncode == 1 and "not allowed" in private.stderr
    unknown = run_cli(
        cli_db,
        "admin", "webhooks", "create", "--org", org,
        "--url", "https://hooks.example.com/in", "--event-type", "nope.created",
    )  # fmt: skip
    assert unknown.returncode == 1 and "nope.created" in unknown.stderr
