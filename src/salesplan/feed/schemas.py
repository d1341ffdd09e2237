"""Feed shapes (contract §11 "Feed shapes")."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from salesplan.kit.schemas import ApiModel

ThreadType = Literal["email", "slack", "calendar"]


def _calendar_date(value: str) -> str:
    date.fromisoformat(value)  # a real day (2026-02-30 is refused)
    return value


# A date `YYYY-MM-DD`, never a date-time (contract §11 "Date filters").
DateText = Annotated[
    str,
    Field(pattern=r"^\d{4}-\d{2}-\d{2}$", json_schema_extra={"format": "date"}),
    AfterValidator(_calendar_date),
]


class Participant(ApiModel):
    email: str
    name: str | None = None


class InboxItem(ApiModel):
    """One thread of the account's inbox; `id` is the thread id of the thread reads."""

    id: uuid.UUID
    type: ThreadType
    subject: str | None
    participants: list[Participant]
    snippet: str
    message_count: int
    # The last activity that has happened; null for a meeting still to come (sorted last).
    last_activity_at: datetime | None


class Author(ApiModel):
    email: str | None = None
    name: str | None = None


class FeedMessageOut(ApiModel):
    id: uuid.UUID
    thread_id: uuid.UUID
    type: ThreadType
    direction: Literal["inbound", "outbound"]
    author: Author
    subject: str | None
    text: str
    occurred_at: datetime
    channel: str | None = None
    ts: str | None = None


class Bucket(ApiModel):
    start: date
    sent: int
    received: int
    replies: int
    meetings: int
    slack_messages: int


class Totals(ApiModel):
    sent: int
    received: int
    replies: int
    meetings: int
    slack_messages: int
    reply_rate: float | None
    median_first_response_seconds: float | None


class AnalyticsOut(ApiModel):
    granularity: Literal["day", "week"]
    from_: date = Field(alias="from")
    to: date
    buckets: list[Bucket]
    totals: Totals


class AttentionItem(ApiModel):
    kind: Literal["unanswered_message", "overdue_task", "open_action_items"]
    reason: str
    entity_type: str
    entity_id: uuid.UUID
    since: datetime
