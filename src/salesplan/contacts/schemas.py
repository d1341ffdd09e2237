from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field, StringConstraints

from salesplan.kit.fields import CrmId, Email, Short, Url
from salesplan.kit.schemas import ApiModel, StrictBody

Phone = Annotated[str, StringConstraints(strip_whitespace=True, max_length=64)]
# An IANA time zone name (`Europe/Paris`); one zoneinfo does not know is a 422 (the service).
TimeZone = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
    Field(
        description="IANA time zone name, e.g. Europe/Paris (unknown names: 422).",
        examples=["Europe/Paris"],
    ),
]


class ContactIn(StrictBody):
    """createAccountContact (accountId from the path), updateContact (PUT replaces)."""

    first_name: Short | None = None
    last_name: Short | None = None
    email: Email | None = None
    title: Short | None = None
    phone: Phone | None = None
    linkedin_url: Url | None = None
    crm_id: CrmId | None = None
    # Where a campaign's send window with `timeZone: "contact"` is read (contract §14).
    time_zone: TimeZone | None = None


class ContactReplace(ContactIn):
    # PUT may move the contact to another account of the organization.
    account_id: uuid.UUID | None = None


class ContactPatch(ContactReplace):
    not_null = ("account_id",)  # may be left out, never null (400)
    pass


class ContactOut(ApiModel):
    id: uuid.UUID
    account_id: uuid.UUID
    first_name: str | None
    last_name: str | None
    full_name: str
    email: str | None
    title: str | None
    phone: str | None
    linkedin_url: str | None
    crm_id: str | None
    time_zone: str | None = None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
