"""`salesplan admin set-integration|inbound-secret`: an organization's Slack integration, its own
e-mail domains and its inbound e-mail secret."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from salesplan.cli.support import OrgOpt, emit, parse_uuid, run_in_session

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession


def set_integration_cmd(
    org: OrgOpt,
    slack_webhook_url: Annotated[
        str | None,
        typer.Option("--slack-webhook-url", metavar="URL", help="Incoming webhook; '' clears it."),
    ] = None,
    slack_signing_secret: Annotated[
        str | None,
        typer.Option("--slack-signing-secret", metavar="SECRET", help="Events API signing secret."),
    ] = None,
    own_domains: Annotated[
        str | None,
        typer.Option(
            "--own-domains",
            metavar="A.COM,B.COM",
            help="The organization's own e-mail domains for the feed; '' goes back to its users'.",
        ),
    ] = None,
) -> None:
    """Set an organization's Slack integration (stored encrypted); prints what is configured."""
    from salesplan.config import Settings
    from salesplan.engage.delivery.integrations import set_integration

    org_id = parse_uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, object]:
        configured = await set_integration(
            session,
            settings,
            org_id,
            slack_webhook_url=slack_webhook_url,
            slack_signing_secret=slack_signing_secret,
        )
        if own_domains is None:
            return {"organizationId": str(org_id), **configured}
        from salesplan.feed.domains import parse_own_domains
        from salesplan.feed.service import set_own_domains

        domains = await set_own_domains(session, org_id, parse_own_domains(own_domains))
        return {"organizationId": str(org_id), **configured, "ownDomains": domains}

    emit(run_in_session(go, settings), "integration")


def inbound_secret_cmd(org: OrgOpt) -> None:
    """Print the organization's inbound e-mail HMAC secret as {"secret": …} (created once)."""
    from salesplan.config import Settings
    from salesplan.engage.delivery.integrations import inbound_secret

    org_id = parse_uuid(org, "--org")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, object]:
        return {"secret": await inbound_secret(session, settings, org_id, create=True)}

    emit(run_in_session(go, settings), "inbound secret")
