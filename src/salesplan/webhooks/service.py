"""Webhook endpoints (contract §13): admins only; URLs checked by the outbound guard at save
time; secrets shown once, rotated with a 24 h overlap; attempts and replay."""

from __future__ import annotations

import ipaddress
import uuid
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.errors import Unprocessable
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope
from salesplan.models.webhooks import WebhookEndpoint
from salesplan.organizations.admin import require_admin
from salesplan.webhooks import repository, signing
from salesplan.webhooks.events import SUBSCRIBABLE
from salesplan.webhooks.repository import EndpointRepository
from salesplan.webhooks.schemas import EndpointIn, EndpointPatch
from salesplan.worker.context import wake_worker

ROTATION_OVERLAP = timedelta(hours=24)
_LOOPBACK = ipaddress.ip_address("127.0.0.1")


async def check_admin(session: AsyncSession, ctx: RequestContext) -> None:
    await require_admin(
        session, ctx, "Only an admin of the organization manages webhook endpoints."
    )


def _check_event_types(event_types: list[str]) -> list[str]:
    unknown = [t for t in event_types if t not in SUBSCRIBABLE]
    if unknown:
        raise Unprocessable(
            "Unknown event types: " + ", ".join(unknown),
            details={"field": "eventTypes", "unknown": unknown},
        )
    return list(dict.fromkeys(event_types))


async def _check_url(settings: Settings, url: str) -> None:
    """https, or http where the guard allows loopback (a test or trial server); a destination
    refused already now is 422 `destination_not_allowed` (contract §12)."""
    pol = outbound.policy(settings)
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        host = None
    http_ok = pol.permits(_LOOPBACK)
    if not host or parts.scheme not in (("https", "http") if http_ok else ("https",)):
        raise Unprocessable(
            "The URL must be an https address.", details={"field": "url", "reason": "invalid_url"}
        )
    await outbound.require_allowed(pol, url, field="url")


async def list_endpoints(
    session: AsyncSession, ctx: RequestContext, params: ListParams, codec: CursorCodec
) -> tuple[list[WebhookEndpoint], PaginationMeta]:
    await check_admin(session, ctx)
    return await EndpointRepository(session, ctx).list(params, codec)


async def get_endpoint(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID
) -> WebhookEndpoint:
    await check_admin(session, ctx)
    return await EndpointRepository(session, ctx).get(endpoint_id)


async def create_endpoint(
    session: AsyncSession, settings: Settings, ctx: RequestContext, data: EndpointIn
) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its signing secret (never shown again)."""
    await check_admin(session, ctx)
    return await new_endpoint(session, settings, ctx, data)


async def new_endpoint(
    session: AsyncSession, settings: Settings, scope: TenantScope, data: EndpointIn
) -> tuple[WebhookEndpoint, str]:
    """`create_endpoint` without the caller's check (the CLI is the operator)."""
    event_types = _check_event_types(data.event_types)
    await _check_url(settings, data.url)
    secret = signing.new_secret()
    endpoint = WebhookEndpoint(
        url=data.url,
        description=data.description,
        event_types=event_types,
        enabled=data.enabled,
        secret_encrypted=signing.seal(settings.signing_key, secret),
    )
    return await EndpointRepository(session, scope).insert(endpoint), secret


async def update_endpoint(
    session: AsyncSession,
    settings: Settings,
    ctx: RequestContext,
    endpoint_id: uuid.UUID,
    data: EndpointPatch,
) -> WebhookEndpoint:
    await check_admin(session, ctx)
    sent = data.sent()
    reject_nulls(sent, EndpointPatch.not_null)
    endpoints = EndpointRepository(session, ctx)
    endpoint = await endpoints.get(endpoint_id, for_update=True)
    fields: dict[str, Any] = {}
    if "event_types" in sent:
        fields["event_types"] = _check_event_types(sent["event_types"])
    if "url" in sent:
        await _check_url(settings, sent["url"])
        fields["url"] = sent["url"]
    if "description" in sent:
        fields["description"] = sent["description"]
    if "enabled" in sent:
        fields["enabled"] = sent["enabled"]
        if sent["enabled"]:  # re-enabled: a fresh start
            fields["disabled_reason"] = None
            fields["failing_since"] = None
    return await endpoints.update(endpoint, fields)


async def delete_endpoint(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID
) -> None:
    """Permanent: its pending deliveries go with it."""
    await check_admin(session, ctx)
    await remove_endpoint(session, ctx, endpoint_id)


async def remove_endpoint(
    session: AsyncSession, scope: TenantScope, endpoint_id: uuid.UUID
) -> None:
    endpoint = await EndpointRepository(session, scope).get(endpoint_id)
    await session.delete(endpoint)
    await session.flush()


async def rotate_secret(
    session: AsyncSession, settings: Settings, ctx: RequestContext, endpoint_id: uuid.UUID
) -> tuple[WebhookEndpoint, str]:
    """A new secret; the current one keeps signing beside it for 24 h."""
    await check_admin(session, ctx)
    return await new_secret(session, settings, ctx, endpoint_id)


async def new_secret(
    session: AsyncSession, settings: Settings, scope: TenantScope, endpoint_id: uuid.UUID
) -> tuple[WebhookEndpoint, str]:
    endpoints = EndpointRepository(session, scope)
    endpoint = await endpoints.get(endpoint_id, for_update=True)
    secret = signing.new_secret()
    fields = {
        "previous_secret_encrypted": endpoint.secret_encrypted,
        "previous_secret_expires_at": utcnow() + ROTATION_OVERLAP,
        "secret_encrypted": signing.seal(settings.signing_key, secret),
    }
    return await endpoints.update(endpoint, fields), secret


async def all_endpoints(session: AsyncSession, scope: TenantScope) -> list[WebhookEndpoint]:
    """Every endpoint of the organization, oldest first (the CLI)."""
    return await EndpointRepository(session, scope).all()


async def list_attempts(
    session: AsyncSession,
    ctx: RequestContext,
    endpoint_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[Any], PaginationMeta]:
    await check_admin(session, ctx)
    await EndpointRepository(session, ctx).get(endpoint_id)
    return await repository.attempts_page(session, ctx, endpoint_id, params, codec)


async def replay(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID, since: datetime
) -> int:
    """Queue every event since `since` again for the endpoint; answers how many."""
    await check_admin(session, ctx)
    endpoint = await EndpointRepository(session, ctx).get(endpoint_id, for_update=True)
    queued = await repository.replay(session, ctx, endpoint, since, utcnow())
    if queued:
        await wake_worker(session)
    return queued
