"""The reads the pages make that no other domain's repository answers."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.engage_delivery import OrganizationIntegration
from salesplan.models.identity import ApiKey, Membership, Organization
from salesplan.models.oauth import WebSession


async def organizations_by_name(
    session: AsyncSession, ids: Sequence[uuid.UUID]
) -> list[Organization]:
    if not ids:
        return []
    rows = await session.execute(
        select(Organization).where(Organization.id.in_(list(ids))).order_by(Organization.name)
    )
    return list(rows.scalars())


async def member_organizations(session: AsyncSession, user_id: uuid.UUID) -> list[Organization]:
    """The organizations the user is a member of, by name."""
    rows = await session.execute(
        select(Organization)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Membership.user_id == user_id)
        .order_by(Organization.name)
    )
    return list(rows.scalars())


async def member_organization_ids(session: AsyncSession, user_id: uuid.UUID) -> list[uuid.UUID]:
    rows = await session.execute(
        select(Membership.organization_id).where(Membership.user_id == user_id)
    )
    return list(rows.scalars())


async def api_keys(session: AsyncSession, user_id: uuid.UUID) -> list[ApiKey]:
    """The user's API keys, newest first."""
    rows = await session.execute(
        select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at.desc())
    )
    return list(rows.scalars())


async def web_session(session: AsyncSession, session_hash: str) -> WebSession | None:
    stmt = select(WebSession).where(WebSession.session_hash == session_hash)
    return (await session.execute(stmt)).scalar_one_or_none()


async def delete_web_session(session: AsyncSession, session_hash: str) -> None:
    await session.execute(delete(WebSession).where(WebSession.session_hash == session_hash))


async def administered_integrations(
    session: AsyncSession, user_id: uuid.UUID
) -> list[tuple[uuid.UUID, str, bool, bool]]:
    """The organizations the user administers, by name: (id, name, whether the Slack webhook URL
    is set, whether the Slack signing secret is set)."""
    rows = await session.execute(
        select(
            Organization.id,
            Organization.name,
            OrganizationIntegration.slack_webhook_url_encrypted.is_not(None),
            OrganizationIntegration.slack_signing_secret_encrypted.is_not(None),
        )
        .join(Membership, Membership.organization_id == Organization.id)
        .outerjoin(
            OrganizationIntegration, OrganizationIntegration.organization_id == Organization.id
        )
        .where(Membership.user_id == user_id, Membership.role == "admin")
        .order_by(Organization.name)
    )
    return [(org_id, name, bool(hook), bool(secret)) for org_id, name, hook, secret in rows]
