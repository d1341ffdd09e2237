"""An organization's integration settings: the Slack webhook and signing secret, and the inbound
e-mail secret. Stored encrypted; read back only to post, sign or verify."""

from __future__ import annotations

import secrets
import uuid
from urllib.parse import urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery.signing import SecretBox
from salesplan.errors import NotFound, Unprocessable
from salesplan.kit import outbound
from salesplan.models.engage_delivery import OrganizationIntegration
from salesplan.models.identity import Organization


async def _integration(
    session: AsyncSession, organization_id: uuid.UUID, *, create: bool
) -> OrganizationIntegration | None:
    row = await session.get(OrganizationIntegration, organization_id)
    if row is None and create:
        if await session.get(Organization, organization_id) is None:
            raise NotFound("Organization not found.", details={"id": str(organization_id)})
        row = OrganizationIntegration(organization_id=organization_id)
        session.add(row)
    return row


def _scheme(url: str) -> str:
    """The URL's scheme when it is one the sender can post to ('' otherwise)."""
    try:
        parts = urlsplit(url)
        httpx.URL(url)
        return parts.scheme if parts.hostname else ""
    except (ValueError, httpx.InvalidURL):
        return ""


async def set_integration(
    session: AsyncSession,
    settings: Settings,
    organization_id: uuid.UUID,
    *,
    slack_webhook_url: str | None = None,
    slack_signing_secret: str | None = None,
) -> dict[str, bool]:
    """Set the fields given (an empty string clears one); answers which are configured.

    A webhook URL already known to be refused (contract §12: not a public address) is a 422
    `destination_not_allowed`, and nothing is written."""
    if slack_webhook_url:
        if await session.get(Organization, organization_id) is None:
            raise NotFound("Organization not found.", details={"id": str(organization_id)})
        await outbound.require_allowed(
            outbound.policy(settings), slack_webhook_url, field="slackWebhookUrl"
        )
        if _scheme(slack_webhook_url) not in ("http", "https"):
            raise Unprocessable(
                "The Slack webhook URL must be an http(s) address.",
                details={"field": "slackWebhookUrl", "reason": "invalid_url"},
            )
    box = SecretBox(settings.signing_key)
    row = await _integration(session, organization_id, create=True)
    assert row is not None
    if slack_webhook_url is not None:
        row.slack_webhook_url_encrypted = box.seal(slack_webhook_url) if slack_webhook_url else None
    if slack_signing_secret is not None:
        row.slack_signing_secret_encrypted = (
            box.seal(slack_signing_secret) if slack_signing_secret else None
        )
    await session.flush()
    return {
        "slackWebhookUrl": row.slack_webhook_url_encrypted is not None,
        "slackSigningSecret": row.slack_signing_secret_encrypted is not None,
    }


async def inbound_secret(
    session: AsyncSession, settings: Settings, organization_id: uuid.UUID, *, create: bool
) -> str | None:
    """The organization's inbound e-mail secret; created on first ask when `create`."""
    box = SecretBox(settings.signing_key)
    row = await _integration(session, organization_id, create=create)
    if row is None:
        return None
    if row.inbound_secret_encrypted is None:
        if not create:
            return None
        secret = secrets.token_urlsafe(32)
        row.inbound_secret_encrypted = box.seal(secret)
        await session.flush()
        return secret
    return box.open(row.inbound_secret_encrypted)


async def _sealed(
    session: AsyncSession, settings: Settings, organization_id: uuid.UUID, column: str
) -> str | None:
    """One of the organization's sealed integration settings, opened (None when unset)."""
    row = await session.get(OrganizationIntegration, organization_id)
    sealed = getattr(row, column) if row is not None else None
    return None if sealed is None else SecretBox(settings.signing_key).open(sealed)


async def slack_webhook_url(
    session: AsyncSession, settings: Settings, organization_id: uuid.UUID
) -> str | None:
    return await _sealed(session, settings, organization_id, "slack_webhook_url_encrypted")


async def slack_signing_secret(
    session: AsyncSession, settings: Settings, organization_id: uuid.UUID
) -> str | None:
    """For the inbound Slack feed: verifies `X-Slack-Signature`."""
    return await _sealed(session, settings, organization_id, "slack_signing_secret_encrypted")
