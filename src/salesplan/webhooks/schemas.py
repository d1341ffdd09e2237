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


class EndpointIn(StrictBody):
    url: Url
    description: Description | None = None
    event_types: Annotated[list[EventType], Field(max_length=100)] = []
    enabled: bool = True


class EndpointPatch(StrictBody):
    not_null = ("url", "event_types", "enabled")  # may be left out, never null (400)
    url: Url | None = None
    description: Description | None = None
    event_types: Annotated[list[EventType], Field(max_length=100)] | None = None
    enabled: bool | None = None


class EndpointOut(ApiModel):
    id: uuid.UUID
    url: str
    description: str | None
    event_types: list[str]
    enabled: bool
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime


class EndpointWithSecret(EndpointOut):
    """The endpoint and its signing secret: answered once, by create and rotate-secret."""

    secret: str


class AttemptOut(ApiModel):
    event_id: uuid.UUID
    type: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    last_status_code: int | None
    next_attempt_at: datetime | None


class ReplayIn(StrictBody):
    since: Instant


class ReplayOut(ApiModel):
    queued: int
