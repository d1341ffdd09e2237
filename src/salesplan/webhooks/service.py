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
from salesplan.errors import Conflict, NotFound, Unprocessable, ValidationFailed
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope
from salesplan.models.webhooks import WebhookEndpoint
from salesplan.organizations.admin import require_admin
from salesplan.webhooks import attempts_repository, signing
from salesplan.webhooks.catalog import CATALOG, TEST_TYPE
from salesplan.webhooks.events import SUBSCRIBABLE, record_for_endpoint, thin
from salesplan.webhooks.repository import EndpointRepository
from salesplan.webhooks.schemas import (
    AttemptDetailOut,
    EndpointIn,
    EndpointPatch,
    EventBody,
    EventTypeOut,
    TryOut,
    WebhookTestData,
)
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
        payload=data.payload,
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
    fields: dict[str, object] = {}
    if "event_types" in sent:
        fields["event_types"] = _check_event_types(sent["event_types"])
    if "url" in sent:
        await _check_url(settings, sent["url"])
        fields["url"] = sent["url"]
    if "description" in sent:
        fields["description"] = sent["description"]
    if "payload" in sent:
        fields["payload"] = sent["payload"]
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
    *,
    status: str | None = None,
    event_type: str | None = None,
) -> tuple[list[Any], PaginationMeta]:
    """The endpoint's deliveries, newest last; `status` and `eventType` (a type, or
    `resource.*`; anything else is a 400) filter them."""
    if event_type is not None and event_type not in SUBSCRIBABLE:
        raise ValidationFailed.at(["query", "eventType"], f"Unknown event type {event_type}.")
    await check_admin(session, ctx)
    await EndpointRepository(session, ctx).get(endpoint_id)
    return await attempts_repository.attempts_page(
        session, ctx, endpoint_id, params, codec, status=status, event_type=event_type
    )


async def attempt_history(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID, event_id: uuid.UUID
) -> AttemptDetailOut:
    """An event's delivery to the endpoint: the event as the endpoint receives it and every
    try `{at, statusCode, durationMs, error}`, oldest first. An event the endpoint never had
    (or another organization's) is a 404."""
    await check_admin(session, ctx)
    endpoint = await EndpointRepository(session, ctx).get(endpoint_id)
    found = await attempts_repository.attempt(session, ctx, endpoint_id, event_id)
    if found is None:
        raise NotFound("Event not found for this endpoint.", details={"id": str(event_id)})
    delivery, tries = found
    payload = thin(delivery.payload) if endpoint.payload == "thin" else delivery.payload
    return AttemptDetailOut(
        event_id=delivery.event_id,
        type=delivery.type,
        status=delivery.status,
        attempts=delivery.attempts,
        last_status_code=delivery.last_status_code,
        next_attempt_at=delivery.next_attempt_at,
        event=EventBody.model_validate_json(payload),
        tries=[TryOut.model_validate(t) for t in tries],
    )


async def send_test(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID
) -> uuid.UUID:
    """Queue a signed `webhook.test` event for the endpoint alone, due now (whatever its
    `eventTypes`); answers the event's id. A disabled endpoint sends nothing: 422."""
    await check_admin(session, ctx)
    endpoint = await EndpointRepository(session, ctx).get(endpoint_id)
    if not endpoint.enabled:
        raise Unprocessable(
            "The endpoint is disabled; enable it before sending a test event.",
            details={"reason": "endpoint_disabled"},
        )
    now = utcnow()
    data = WebhookTestData(
        endpoint_id=endpoint.id,
        message="A test event: this endpoint receives Salesplan's webhooks.",
        created_at=now,
    )
    event_id = await record_for_endpoint(
        session, endpoint.organization_id, endpoint.id, TEST_TYPE, data, now
    )
    await wake_worker(session)
    return event_id


def event_types(document: dict[str, Any], openapi_url: str) -> list[EventTypeOut]:
    """Every event type with its description and its `data` schema, a `$ref` into the OpenAPI
    document (the one its `webhooks` section uses)."""
    section = document.get("webhooks", {})
    found = []
    for entry in CATALOG:
        body = section[entry.name]["post"]["requestBody"]["content"]["application/json"]
        ref = str(body["schema"]["properties"]["data"]["$ref"])
        found.append(
            EventTypeOut(
                type=entry.name, description=entry.description, schema_={"$ref": openapi_url + ref}
            )
        )
    return found


async def replay(
    session: AsyncSession, ctx: RequestContext, endpoint_id: uuid.UUID, since: datetime
) -> int:
    """Queue every event since `since` (at the earliest the endpoint's creation: it never
    receives what happened before it existed) again for the endpoint; answers how many. One
    replay per endpoint at a time: while one still has deliveries pending, another is a 409
    `conflict` (`details.reason: "replay_in_progress"`)."""
    await check_admin(session, ctx)
    endpoint = await EndpointRepository(session, ctx).get(endpoint_id, for_update=True)
    if await attempts_repository.replay_running(session, ctx, endpoint.id):
        raise Conflict(
            "A replay of this endpoint is still in progress; try again when it has finished.",
            details={"reason": "replay_in_progress"},
        )
    try:
        since = max(since, endpoint.created_at)
    except OverflowError:  # an offset that moves `since` out of the representable range
        since = endpoint.created_at
    queued = await attempts_repository.replay(session, ctx, endpoint, since, utcnow())
    if queued:
        await wake_worker(session)
    return queued
