"""Engage request and response shapes (contract §7 "engage", §11 "Engage shapes")."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, model_validator

from salesplan.contacts.schemas import ContactOut
from salesplan.kit.fields import Instant, Name
from salesplan.kit.schemas import ABSENT_OR_NULL, ApiModel, BulkRow, StrictBody, equals, present

Channel = Literal["EMAIL", "LINKEDIN", "SLACK"]
ListType = Literal["MANUAL", "DYNAMIC"]
CampaignStatus = Literal["draft", "active", "paused", "completed"]

Subject = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=998)]
Body = Annotated[str, StringConstraints(min_length=1, max_length=100_000)]
Description = Annotated[str, StringConstraints(max_length=10_000)]

_DOMAIN = re.compile(r"^@?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$")
# What `_domain` accepts, before it lower-cases (and without surrounding blanks).
DOMAIN_PATTERN = (
    r"^@?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$"
)


def _domain(value: str) -> str:
    value = value.strip().lower()
    if not _DOMAIN.match(value):
        raise ValueError("Not a valid e-mail domain (e.g. example.com).")
    return value.lstrip("@")


EmailDomain = Annotated[
    str,
    StringConstraints(max_length=255),
    AfterValidator(_domain),
    Field(json_schema_extra={"pattern": DOMAIN_PATTERN}),
]


# --- templates -----------------------------------------------------------------------------


class TemplateIn(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={"if": equals(channel="EMAIL"), "then": present("subject")}
    )

    name: Name
    channel: Channel
    subject: Subject | None = None
    body: Body
    body_html: Body | None = None

    @model_validator(mode="after")
    def _subject_for_email(self) -> TemplateIn:
        if self.channel == "EMAIL" and self.subject is None:
            raise ValueError("subject is required for an EMAIL template.")
        return self


class TemplatePatch(StrictBody):
    not_null = ("name", "channel", "body")  # may be left out, never null (400)
    name: Name | None = None
    channel: Channel | None = None
    subject: Subject | None = None
    body: Body | None = None
    body_html: Body | None = None


class TemplateOut(ApiModel):
    id: uuid.UUID
    name: str
    channel: str
    subject: str | None
    body: str
    body_html: str | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class PreviewIn(StrictBody):
    contact_id: uuid.UUID


class PreviewOut(ApiModel):
    template_id: uuid.UUID
    contact_id: uuid.UUID
    channel: str
    subject: str | None
    body: str
    body_html: str | None
    # Merge fields the template names that have no value (rendered empty).
    unknown_fields: list[str]


# --- drafts --------------------------------------------------------------------------------


class DraftIn(StrictBody):
    name: Name | None = None
    channel: Channel
    subject: Subject | None = None
    body: Body | None = None
    body_html: Body | None = None
    contact_id: uuid.UUID | None = None
    template_id: uuid.UUID | None = None


class DraftPatch(StrictBody):
    not_null = ("channel",)  # may be left out, never null (400)
    name: Name | None = None
    channel: Channel | None = None
    subject: Subject | None = None
    body: Body | None = None
    body_html: Body | None = None
    contact_id: uuid.UUID | None = None
    template_id: uuid.UUID | None = None


class DraftOut(ApiModel):
    id: uuid.UUID
    name: str | None
    channel: str
    subject: str | None
    body: str | None
    body_html: str | None
    contact_id: uuid.UUID | None
    template_id: uuid.UUID | None
    created_by_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime


# --- lists ---------------------------------------------------------------------------------


class Criteria(StrictBody):
    """A DYNAMIC list's filter; every key given must hold (AND). At least one key."""

    model_config = ConfigDict(json_schema_extra={"minProperties": 1})
    not_null = ("account_ids", "title_contains", "email_domain", "has_email", "updated_since")

    account_ids: list[uuid.UUID] | None = Field(default=None, min_length=1, max_length=1000)
    title_contains: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
        | None
    ) = None
    email_domain: EmailDomain | None = None
    has_email: bool | None = None
    updated_since: Instant | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Criteria:
        if not any(v is not None for v in self.model_dump().values()):
            raise ValueError("criteria must name at least one condition.")
        return self

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ListIn(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={
            "if": equals(type="DYNAMIC"),
            "then": present("criteria"),
            "else": {"properties": {"criteria": ABSENT_OR_NULL}},
        }
    )

    name: Name
    description: Description | None = None
    type: ListType
    criteria: Criteria | None = None

    @model_validator(mode="after")
    def _criteria_for_dynamic(self) -> ListIn:
        if self.type == "DYNAMIC" and self.criteria is None:
            raise ValueError("criteria is required for a DYNAMIC list.")
        if self.type == "MANUAL" and self.criteria is not None:
            raise ValueError("criteria is only for DYNAMIC lists.")
        return self


class ListPatch(StrictBody):
    not_null = ("name", "criteria")  # may be left out, never null (400)
    name: Name | None = None
    description: Description | None = None
    criteria: Criteria | None = None


class ListOut(ApiModel):
    id: uuid.UUID
    name: str
    description: str | None
    type: str
    criteria: dict[str, Any] | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class MembersIn(StrictBody):
    contact_ids: list[uuid.UUID] = Field(min_length=1, max_length=1000)


class MembersAdded(ApiModel):
    added: int
    skipped: int


class MemberOut(ApiModel):
    contact_id: uuid.UUID
    contact: ContactOut
    # When the contact was added (MANUAL); null for a DYNAMIC list, which has no membership rows.
    added_at: datetime | None


# --- campaigns -----------------------------------------------------------------------------


class StepIn(StrictBody):
    channel: Channel
    template_id: uuid.UUID
    delay_minutes: int = Field(default=0, ge=0, le=525_600)


class FlowIn(StrictBody):
    steps: list[StepIn] = Field(default_factory=list, max_length=50)


Day = Literal["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
Clock = Annotated[
    str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$"), Field(examples=["09:00"])
]
ZoneName = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class SendWindowIn(StrictBody):
    """When a campaign's steps may go out (contract §14): on `days`, from `start` to `end`
    (24-hour HH:MM; an end before the start crosses midnight, an end equal to it is a 422), in
    the contact's time zone (`timeZone: "contact"`, else `fallbackTimeZone`, default UTC) or in
    a fixed IANA zone. An unknown zone is a 422."""

    days: list[Day] = Field(min_length=1, max_length=7)
    start: Clock
    end: Clock
    time_zone: ZoneName = Field(
        default="UTC", description='"contact", or an IANA time zone name (e.g. Europe/Paris).'
    )
    fallback_time_zone: ZoneName | None = Field(
        default=None,
        description='With timeZone "contact": the zone of contacts without one (default UTC).',
    )

    def wire(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        data["days"] = sorted(set(self.days), key=DAY_ORDER.index)
        return data


DAY_ORDER = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


class CampaignIn(StrictBody):
    name: Name
    description: Description | None = None
    flow: FlowIn = Field(default_factory=FlowIn)
    send_window: SendWindowIn | None = None


class CampaignPatch(StrictBody):
    not_null = ("name", "flow", "status")  # may be left out, never null (400)
    name: Name | None = None
    description: Description | None = None
    flow: FlowIn | None = None
    status: CampaignStatus | None = None
    # null removes the window.
    send_window: SendWindowIn | None = None


class StepOut(ApiModel):
    channel: str
    template_id: uuid.UUID
    delay_minutes: int


class FlowOut(ApiModel):
    steps: list[StepOut]


class SendWindowOut(ApiModel):
    days: list[str]
    start: str
    end: str
    time_zone: str
    fallback_time_zone: str | None = None


class CampaignOut(ApiModel):
    id: uuid.UUID
    name: str
    description: str | None
    status: str
    flow: FlowOut
    send_window: SendWindowOut | None = None
    started_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class BulkCampaignsIn(StrictBody):
    # Rows are validated one by one in the service: a bad row is a 400 result, not a 400 call;
    # an item that is not an object is not a row (400 for the call).
    campaigns: list[BulkRow] = Field(min_length=1, max_length=100)


class BulkCampaignsOut(ApiModel):
    results: list[dict[str, Any]]
    created: int
    failed: int


class EnrollIn(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [present("listId"), present("contactIds")]}
    )

    list_id: uuid.UUID | None = None
    contact_ids: list[uuid.UUID] | None = Field(default=None, min_length=1, max_length=10_000)

    @model_validator(mode="after")
    def _one_source(self) -> EnrollIn:
        if (self.list_id is None) == (self.contact_ids is None):
            raise ValueError("Give exactly one of listId or contactIds.")
        return self


class JobOut(ApiModel):
    id: uuid.UUID
    campaign_id: uuid.UUID
    list_id: uuid.UUID | None
    status: str
    total: int
    processed: int
    enrolled: int
    skipped: int
    skipped_reasons: dict[str, int]
    errors: list[Any]
    attempts: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    completed_at: datetime | None


class JobEnvelope(ApiModel):
    job: JobOut


class StepStatus(ApiModel):
    index: int
    channel: str
    template_id: uuid.UUID
    delay_minutes: int
    states: dict[str, int]


class CampaignStatusOut(ApiModel):
    campaign_id: uuid.UUID
    status: str
    enrolled: int
    states: dict[str, int]
    steps: list[StepStatus]
