"""Outbound webhook endpoints, their attempts and replay (contract §13). Admins only."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response, page_response
from salesplan.kit.schemas import ListResponse, PaginationMeta
from salesplan.webhooks import service
from salesplan.webhooks.schemas import (
    AttemptDetailOut,
    AttemptOut,
    DeliveryStatus,
    EndpointIn,
    EndpointOut,
    EndpointPatch,
    EndpointWithSecret,
    EventTypeOut,
    ReplayIn,
    ReplayOut,
    TestSent,
)

router = APIRouter(tags=["webhooks"])

Read = Annotated[RequestContext, require("webhooks:read", "webhooks")]
Write = Annotated[RequestContext, require("webhooks:write", "webhooks")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt"))]
AttemptParams = Annotated[ListParams, list_params(("createdAt",))]


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _with_secret(endpoint: object, secret: str) -> EndpointWithSecret:
    out = EndpointOut.model_validate(endpoint)
    return EndpointWithSecret(**out.model_dump(), secret=secret)


@router.get(
    "/endpoints",
    operation_id="listWebhookEndpoints",
    response_model=ListResponse[EndpointOut],
    summary="List webhook endpoints",
)
async def list_webhook_endpoints(
    ctx: Read, session: SessionDep, codec: CursorCodecDep, params: Params
) -> Response:
    """List the organization's webhook endpoints (admins)."""
    items, meta = await service.list_endpoints(session, ctx, params, codec)
    return page_response(EndpointOut, items, meta)


@router.post(
    "/endpoints",
    operation_id="createWebhookEndpoint",
    status_code=201,
    response_model=EndpointWithSecret,
    summary="Create a webhook endpoint",
)
async def create_webhook_endpoint(
    body: EndpointIn, ctx: Write, session: SessionDep, request: Request
) -> Response:
    """Create an endpoint; its signing secret is answered this once."""
    endpoint, secret = await service.create_endpoint(session, _settings(request), ctx, body)
    return json_response(_with_secret(endpoint, secret), 201)


@router.get(
    "/endpoints/{endpointId}",
    operation_id="getWebhookEndpoint",
    response_model=EndpointOut,
    summary="Read a webhook endpoint",
)
async def get_webhook_endpoint(endpointId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one endpoint (never its secret)."""
    endpoint = await service.get_endpoint(session, ctx, endpointId)
    return json_response(EndpointOut.model_validate(endpoint))


@router.patch(
    "/endpoints/{endpointId}",
    operation_id="updateWebhookEndpoint",
    response_model=EndpointOut,
    summary="Change a webhook endpoint",
)
async def update_webhook_endpoint(
    endpointId: uuid.UUID,
    body: EndpointPatch,
    ctx: Write,
    session: SessionDep,
    request: Request,
) -> Response:
    """Change the fields sent; `enabled: true` re-enables a disabled endpoint."""
    endpoint = await service.update_endpoint(session, _settings(request), ctx, endpointId, body)
    return json_response(EndpointOut.model_validate(endpoint))


@router.delete(
    "/endpoints/{endpointId}",
    operation_id="deleteWebhookEndpoint",
    status_code=204,
    summary="Delete a webhook endpoint",
)
async def delete_webhook_endpoint(
    endpointId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Delete an endpoint permanently, with its pending deliveries."""
    await service.delete_endpoint(session, ctx, endpointId)
    return Response(status_code=204)


@router.post(
    "/endpoints/{endpointId}/rotate-secret",
    operation_id="rotateWebhookEndpointSecret",
    response_model=EndpointWithSecret,
    summary="Rotate a webhook endpoint's signing secret",
)
async def rotate_webhook_endpoint_secret(
    endpointId: uuid.UUID, ctx: Write, session: SessionDep, request: Request
) -> Response:
    """A new secret, answered this once; the old one keeps signing beside it for 24 h."""
    endpoint, secret = await service.rotate_secret(session, _settings(request), ctx, endpointId)
    return json_response(_with_secret(endpoint, secret))


@router.get(
    "/endpoints/{endpointId}/attempts",
    operation_id="listWebhookAttempts",
    response_model=ListResponse[AttemptOut],
    summary="List an endpoint's delivery attempts",
)
async def list_webhook_attempts(
    endpointId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: AttemptParams,
    status: Annotated[DeliveryStatus | None, Query(description="Only deliveries in it.")] = None,
    eventType: Annotated[
        str | None,
        Query(max_length=64, description="Only events of this type (or `resource.*`)."),
    ] = None,
) -> Response:
    """Each event's delivery to the endpoint: status, attempts, last status, next attempt;
    filtered by `status` and `eventType`."""
    rows, meta = await service.list_attempts(
        session, ctx, endpointId, params, codec, status=status, event_type=eventType
    )
    return page_response(AttemptOut, [dict(r._mapping) for r in rows], meta)


@router.get(
    "/endpoints/{endpointId}/attempts/{eventId}",
    operation_id="getWebhookAttempt",
    response_model=AttemptDetailOut,
    summary="Read an event's delivery to an endpoint, with every try",
)
async def get_webhook_attempt(
    endpointId: uuid.UUID, eventId: uuid.UUID, ctx: Read, session: SessionDep
) -> Response:
    """The event as the endpoint receives it and every try `{at, statusCode, durationMs,
    error}`, oldest first; `error` is in our own words (`timeout after 15 s`, `connection
    refused`, `HTTP 500`, …), never the receiver's body."""
    return json_response(await service.attempt_history(session, ctx, endpointId, eventId))


@router.post(
    "/endpoints/{endpointId}/test",
    operation_id="testWebhookEndpoint",
    status_code=202,
    response_model=TestSent,
    summary="Send a test event to an endpoint",
)
async def test_webhook_endpoint(endpointId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Send a signed `webhook.test` event to the endpoint now (whatever its `eventTypes`); its
    delivery is in the attempts like any other."""
    event_id = await service.send_test(session, ctx, endpointId)
    return json_response(TestSent(event_id=event_id), 202)


@router.get(
    "/event-types",
    operation_id="listWebhookEventTypes",
    response_model=ListResponse[EventTypeOut],
    summary="List the webhook event types",
)
async def list_webhook_event_types(ctx: Read, request: Request) -> Response:
    """Every event `type` with a one-line description and its `data` schema (a `$ref` into
    this OpenAPI document, whose `webhooks` section carries each event)."""
    url = f"{request.app.openapi_url}"
    types = service.event_types(request.app.openapi(), url)
    meta = PaginationMeta(
        has_next_page=False, total_count=len(types), page=1, page_size=len(types), total_pages=1
    )
    return page_response(EventTypeOut, types, meta)


@router.post(
    "/endpoints/{endpointId}/replay",
    operation_id="replayWebhookEvents",
    status_code=202,
    response_model=ReplayOut,
    summary="Send an endpoint's events again",
)
async def replay_webhook_events(
    endpointId: uuid.UUID, body: ReplayIn, ctx: Write, session: SessionDep
) -> Response:
    """Queue every event since `since` again for the endpoint."""
    queued = await service.replay(session, ctx, endpointId, body.since)
    return json_response(ReplayOut(queued=queued), 202)
