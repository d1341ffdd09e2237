from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from salesplan.kit.fields import Instant
from salesplan.kit.schemas import ApiModel, StrictBody

Url = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2048)]
Description = Annotated[str, StringConstraints(max_length=500)]
EventType = Annotated[str, StringConstraints(min_length=1, max_length=64)]
# What an event's `data` holds: the resource as the API answers it, or its id and updatedAt.
Payload = Literal["snapshot", "thin"]
DeliveryStatus = Literal["pending", "delivered", "failed"]


class EndpointIn(StrictBody):
    url: Url
    description: Description | None = None
    event_types: Annotated[list[EventType], Field(max_length=100)] = []
    enabled: bool = True
    payload: Payload = "snapshot"


class EndpointPatch(StrictBody):
    not_null = ("url", "event_types", "enabled", "payload")  # may be left out, never null
    url: Url | None = None
    description: Description | None = None
    event_types: Annotated[list[EventType], Field(max_length=100)] | None = None
    enabled: bool | None = None
    payload: Payload | None = None


class EndpointOut(ApiModel):
    id: uuid.UUID
    url: str
    description: str | None
    event_types: list[str]
    enabled: bool
    disabled_reason: str | None
    payload: Payload
    created_at: datetime
    updated_at: datetime


class EndpointWithSecret(EndpointOut):
    """The endpoint and its signing secret: answered once, by create and rotate-secret."""

    secret: str


class AttemptOut(ApiModel):
    event_id: uuid.UUID
    type: str
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    next_attempt_at: datetime | None


class TryOut(ApiModel):
    """One try of a delivery. `error` is our own words (`timeout after 15 s`, `connection
    refused`, `TLS handshake failed`, `redirect not followed`, `destination not allowed`,
    `HTTP 500`, …), never the receiver's body; null when it was delivered."""

    at: datetime
    status_code: int | None
    duration_ms: int
    error: str | None


class EventBody(ApiModel):
    """The event as it is sent: `{"type", "timestamp", "data"}` (`data` thin or not, as the
    endpoint receives it)."""

    type: str
    timestamp: datetime
    data: dict[str, object]


class AttemptDetailOut(AttemptOut):
    """An event's delivery to an endpoint with every try, oldest first."""

    event: EventBody
    tries: list[TryOut]


class EventTypeOut(ApiModel):
    type: str
    description: str
    schema_: dict[str, str] = Field(
        serialization_alias="schema",
        description="The `data` schema: a `$ref` into the OpenAPI document's components.",
    )


class WebhookTestData(ApiModel):
    """`data` of a `webhook.test` event."""

    endpoint_id: uuid.UUID
    message: str
    created_at: datetime


class TestSent(ApiModel):
    event_id: uuid.UUID


class ReplayIn(StrictBody):
    since: Instant


class ReplayOut(ApiModel):
    queued: int
