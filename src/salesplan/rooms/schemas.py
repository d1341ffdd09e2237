"""Shares, the room's settings and task comments on the wire (contract §16). The spec's Plan
objects are untouched: these are resources of their own."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from salesplan.kit.fields import Email, Instant
from salesplan.kit.schemas import NOT_BLANK_PATTERN, ApiModel, StrictBody, present

Role = Literal["viewer", "collaborator"]
MAX_HIDDEN = 1000
MAX_COMMENT = 4000
MAX_WELCOME = 4000

CommentBody = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_COMMENT, pattern=NOT_BLANK_PATTERN)
]
Ids = Annotated[list[uuid.UUID], Field(max_length=MAX_HIDDEN)]


class ShareIn(StrictBody):
    """createPlanShare: a contact of the plan's account, by id or by address (exactly one)."""

    model_config = ConfigDict(json_schema_extra={"oneOf": [present("contactId"), present("email")]})
    contact_id: uuid.UUID | None = None
    email: Email | None = None
    role: Role
    expires_at: Instant | None = None
    allow_invites: bool = False

    @model_validator(mode="after")
    def _one_person(self) -> ShareIn:
        if (self.contact_id is None) == (self.email is None):
            raise ValueError("Give exactly one of contactId and email.")
        return self


class ShareOut(ApiModel):
    id: uuid.UUID
    plan_id: uuid.UUID
    contact_id: uuid.UUID
    email: str
    role: Role
    status: Literal["active", "revoked", "expired"]
    allow_invites: bool
    invited_by_share_id: uuid.UUID | None
    expires_at: datetime | None
    last_viewed_at: datetime | None
    created_at: datetime


class ShareCreated(ShareOut):
    """The new share and its link, answered this once: the token is stored only as a hash."""

    url: str


class RoomIn(StrictBody):
    """updatePlanRoom (PUT replaces: what is left out is empty)."""

    hidden_milestone_ids: Ids = []
    hidden_goal_ids: Ids = []
    hidden_task_ids: Ids = []
    welcome_message: Annotated[str, StringConstraints(max_length=MAX_WELCOME)] | None = None


class RoomOut(ApiModel):
    hidden_milestone_ids: list[uuid.UUID]
    hidden_goal_ids: list[uuid.UUID]
    hidden_task_ids: list[uuid.UUID]
    welcome_message: str | None


class CommentIn(StrictBody):
    """createPlanTaskComment: plain text; `internal` comments stay on the seller side."""

    body: CommentBody
    internal: bool = False


class Author(ApiModel):
    type: Literal["user", "contact"]
    id: uuid.UUID | None
    name: str


class CommentOut(ApiModel):
    id: uuid.UUID
    task_id: uuid.UUID
    body: str
    author: Author
    internal: bool
    created_at: datetime


ActivityType = Literal["viewed", "task_completed", "task_reopened", "commented", "invited"]


class ActivityOut(ApiModel):
    """One buyer action in the plan's room."""

    id: uuid.UUID
    type: ActivityType
    share_id: uuid.UUID | None
    contact_id: uuid.UUID | None
    task_id: uuid.UUID | None
    created_at: datetime


class EngagementOut(ApiModel):
    """One contact's engagement with the plan: counts of all time, `score` 0 to 5."""

    contact_id: uuid.UUID
    name: str
    views: int
    last_viewed_at: datetime | None
    tasks_completed: int
    comments: int
    score: int = Field(ge=0, le=5)


class EngagementList(ApiModel):
    data: list[EngagementOut]
