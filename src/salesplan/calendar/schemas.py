"""Calendar request and response bodies (contract §7 "calendar", §11 "Calendar")."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator

from salesplan.kit.fields import Email, Instant
from salesplan.kit.responses import entity_tag
from salesplan.kit.schemas import ApiModel, StrictBody


class ConnectionIn(StrictBody):
    url: str = Field(
        min_length=1,
        max_length=2048,
        json_schema_extra={"pattern": r"^[Hh][Tt][Tt][Pp][Ss]?://[^\x00]*$"},
    )
    username: str = Field(min_length=1, max_length=255)
    password: str = Field(min_length=1, max_length=1024)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.lower().startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value


class ConnectionOut(ApiModel):
    """The password is never part of it."""

    id: uuid.UUID
    user_id: uuid.UUID
    url: str
    username: str
    last_synced_at: datetime | None
    sync_requested_at: datetime | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime


class Attendee(ApiModel):
    email: str
    name: str | None = None
    status: str | None = None


class EventOut(ApiModel):
    id: uuid.UUID
    connection_id: uuid.UUID
    user_id: uuid.UUID
    uid: str
    title: str
    description: str | None
    location: str | None
    start: datetime = Field(validation_alias="start_at")
    end: datetime = Field(validation_alias="end_at")
    all_day: bool
    recurring: bool
    recurrence_id: str | None
    attendees: list[Attendee]
    organizer_email: str | None
    account_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    etag: str = Field(
        default="",
        description="The entity tag of this representation (also the ETag header of "
        "getCalendarEvent): send it as If-Match on updateCalendarEvent to change the event "
        "only if it is still this one (else 412).",
    )

    @classmethod
    def of(cls, event: Any) -> EventOut:
        """The event's representation, its `etag` naming the bytes of everything else in it."""
        out = cls._of(event)
        rest = out.model_dump_json(by_alias=True, exclude={"etag"}).encode()
        out.etag = entity_tag(rest)
        return out

    @classmethod
    def _of(cls, event: Any) -> EventOut:
        return cls(
            id=event.id,
            connection_id=event.connection_id,
            user_id=event.user_id,
            uid=event.uid,
            title=event.title,
            description=event.description,
            location=event.location,
            start_at=event.start_at,
            end_at=event.end_at,
            all_day=event.all_day,
            recurring=bool(event.recurrence_key),
            recurrence_id=event.recurrence_key or None,
            attendees=[Attendee(**a) for a in event.attendees or []],
            organizer_email=event.organizer_email,
            account_id=event.account_id,
            created_at=event.created_at,
            updated_at=event.updated_at,
        )


def _lower_domain(value: str) -> str:
    local, _, domain = value.rpartition("@")
    return f"{local}@{domain.lower()}"


# The house e-mail rule (its pattern is in the document), the domain lower-cased for matching.
AttendeeEmail = Annotated[Email, AfterValidator(_lower_domain)]


class AttendeeIn(StrictBody):
    email: AttendeeEmail
    name: str | None = Field(default=None, max_length=255)


class EventPatch(StrictBody):
    not_null = ("title", "start", "end")  # may be left out, never null (400)
    title: str | None = Field(default=None, max_length=1024)
    description: str | None = None
    start: Instant | None = None
    end: Instant | None = None
    location: str | None = Field(default=None, max_length=1024)
    attendees: list[AttendeeIn] | None = Field(default=None, max_length=500)


class ActionItemIn(StrictBody):
    text: str = Field(min_length=1, max_length=10_000)
    assignee_email: AttendeeEmail | None = None
    due_date: date | None = None
    completed: bool = False


class Segment(StrictBody):
    speaker: str | None = Field(default=None, max_length=255)
    start_seconds: float = Field(ge=0)
    text: str


class TranscriptIn(StrictBody):
    segments: list[Segment]


class ArtifactsIn(StrictBody):
    summary: str | None = None
    action_items: list[ActionItemIn] | None = Field(default=None, max_length=1000)
    transcript: TranscriptIn | None = None


class ActionItemOut(ApiModel):
    id: uuid.UUID
    text: str
    assignee_email: str | None
    due_date: date | None
    completed: bool


class SegmentOut(ApiModel):
    speaker: str | None
    start_seconds: float
    text: str


class SummaryOut(ApiModel):
    event_id: uuid.UUID
    summary: str
    updated_at: datetime


class TranscriptOut(ApiModel):
    event_id: uuid.UUID
    segments: list[SegmentOut]


class ArtifactsOut(ApiModel):
    event_id: uuid.UUID
    summary: str | None
    action_items: list[ActionItemOut]
    transcript: TranscriptOut | None
    updated_at: datetime
