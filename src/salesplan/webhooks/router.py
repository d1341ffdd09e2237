"""Outbound webhook endpoints, their attempts and replay (contract §13). Admins only."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Request
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.db import SessionDep
from salesplan.kit.pagination import CursorCodecDep, ListParams, list_params
from salesplan.kit.responses import json_response, page_response
from salesplan.kit.schemas import ListResponse
from salesplan.webhooks import service
from salesplan.webhooks.schemas import (
    AttemptOut,
    EndpointIn,
    EndpointOut,
    EndpointPatch,
    EndpointWithSecret,
    ReplayIn,
    ReplayOut,
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
) -> Response:
    """Each event's delivery to the endpoint: status, attempts, last status, next attempt."""
    rows, meta = await service.list_attempts(session, ctx, endpointId, params, codec)
    return page_response(AttemptOut, [dict(r._mapping) for r in rows], meta)


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
