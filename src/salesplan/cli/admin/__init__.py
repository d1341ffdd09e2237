"""`salesplan admin …`: the group, and its commands in the order `--help` lists them. The
commands live in one module per subject: `users.py` (organizations, users, passwords),
`credentials.py` (API keys and OAuth apps), `integrations.py` (Slack, own domains, the inbound
secret) and `webhooks.py` (`salesplan admin webhooks …`). They import `salesplan.cli.support`,
never this package."""

from __future__ import annotations

import typer

from salesplan.cli.admin import credentials, integrations, users
from salesplan.cli.admin.webhooks import webhooks

admin = typer.Typer(
    no_args_is_help=True, help="Organizations, users, passwords, API keys and OAuth apps."
)

for name, command in (
    ("create-org", users.create_org),
    ("create-user", users.create_user),
    ("create-api-key", credentials.create_api_key_cmd),
    ("create-oauth-app", credentials.create_oauth_app_cmd),
    ("list-users", users.list_users),
    ("set-password", users.set_password),
    ("list-api-keys", credentials.list_api_keys),
    ("revoke-api-key", credentials.revoke_api_key_cmd),
    ("list-oauth-apps", credentials.list_oauth_apps),
    ("revoke-oauth-app", credentials.revoke_oauth_app),
    ("set-integration", integrations.set_integration_cmd),
    ("inbound-secret", integrations.inbound_secret_cmd),
):
    admin.command(name)(command)
admin.add_typer(webhooks, name="webhooks")
