"""Engage delivery on the wire: the send body, queue items, replies, analytics."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from salesplan.engage.schemas import CampaignOut
from salesplan.kit.fields import Instant
from salesplan.kit.schemas import ApiModel, StrictBody, equals, present

Channel = Literal["EMAIL", "LINKEDIN", "SLACK"]
QueueStatus = Literal[
    "scheduled", "queued", "sending", "sent", "delivered", "bounced", "failed", "cancelled"
]


_NON_EMPTY = {"type": "string", "minLength": 1}


class SendMessageIn(StrictBody):
    """contactId or to; without templateId and draftId, a body (and for EMAIL a subject);
    an EMAIL `to` holds an @."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"anyOf": [present("contactId"), present("to")]},
                {
                    "anyOf": [
                        present("templateId"),
                        present("draftId"),
                        {
                            **present(body=_NON_EMPTY),
                            "if": equals(channel="EMAIL"),
                            "then": present(subject=_NON_EMPTY),
                        },
                    ]
                },
                {
                    "if": {"allOf": [equals(channel="EMAIL"), present("to")]},
                    "then": {"properties": {"to": {"pattern": "@"}}},
                },
            ]
        }
    )

    channel: Channel
    contact_id: uuid.UUID | None = None
    to: str | None = Field(default=None, min_length=1, max_length=320)
    template_id: uuid.UUID | None = None
    draft_id: uuid.UUID | None = None
    subject: str | None = Field(default=None, max_length=998)
    body: str | None = Field(default=None, max_length=200_000)
    body_html: str | None = Field(default=None, max_length=500_000)
    scheduled_at: Instant | None = None


class QueueItemOut(ApiModel):
    id: uuid.UUID
    channel: Channel
    status: QueueStatus
    manual: bool
    contact_id: uuid.UUID | None
    campaign_id: uuid.UUID | None
    to: str | None = Field(validation_alias="to_address")
    subject: str | None
    body: str
    body_html: str | None
    message_id: str = Field(validation_alias="rfc_message_id")
    attempts: int
    last_error: str | None
    scheduled_at: datetime | None
    sent_at: datetime | None
    delivered_at: datetime | None
    bounced_at: datetime | None
    opened_at: datetime | None
    open_count: int
    clicked_at: datetime | None
    click_count: int
    replied_at: datetime | None
    created_at: datetime
    updated_at: datetime


class SendMessageOut(ApiModel):
    message: QueueItemOut


class StartCampaignOut(ApiModel):
    campaign: CampaignOut
    # Contacts whose first step was scheduled.
    started: int
    # Enrolled contacts whose first step could not be scheduled, by reason (`no_email`,
    # `suppressed`), keyed like an enrollment job's `skippedReasons`.
    skipped: dict[str, int]


class ReplyOut(ApiModel):
    id: uuid.UUID
    message_id: uuid.UUID | None
    contact_id: uuid.UUID | None
    campaign_id: uuid.UUID | None
    from_: str = Field(validation_alias="from_address", serialization_alias="from")
    subject: str | None
    text: str
    # Present only with includeHtml=true (the router drops it otherwise).
    html: str | None = None
    # An automatic answer (out of office, RFC 3834 Auto-Submitted, …; contract §14): it sets no
    # repliedAt, does not count as replied and does not stop the sequence.
    auto_reply: bool = Field(
        description="true for an automatic answer (out of office, Auto-Submitted, …): it does "
        "not set repliedAt, count as replied or stop the sequence."
    )
    received_at: datetime


class AnalyticsTotals(ApiModel):
    sent: int = 0
    delivered: int = 0
    opened: int = 0
    clicked: int = 0
    replied: int = 0
    bounced: int = 0


class _Dated(ApiModel):
    date: date


# One day's counts: `date` first, then the totals' fields (pydantic takes fields from the last
# base up). No docstring: it would become the schema's description.
class AnalyticsDay(AnalyticsTotals, _Dated):
    pass


class AnalyticsOut(ApiModel):
    from_: date = Field(serialization_alias="from")
    to: date
    days: list[AnalyticsDay]
    totals: AnalyticsTotals


SuppressionReason = Literal["unsubscribed", "hard_bounce", "complaint", "manual"]


class SuppressionOut(ApiModel):
    """An address on the organization's suppression list (contract §14): never written to while
    it is there."""

    address: str = Field(validation_alias="email", description="The parsed address.")
    reason: SuppressionReason
    created_at: datetime


class SuppressionsIn(StrictBody):
    """Opt-outs imported from another system (contract §14, 2026-11-27); each address is checked
    on its own: one that is not an address is that row's 400 result."""

    addresses: list[str] = Field(
        min_length=1,
        max_length=1000,
        description="1..1000 e-mail addresses, each compared as parsed (`Ada <ADA@x.example>` "
        "is ada@x.example).",
    )
    reason: Literal["manual"] = Field(
        default="manual", description="Why they are suppressed: `manual` (an import)."
    )


class SuppressionsOut(ApiModel):
    """One result per address, in order: `{index, address (as sent), status: 201 (suppressed
    now) | 200 (already suppressed: its first reason stays) | 400, data | error}`."""

    results: list[dict[str, Any]]
    created: int
    failed: int
