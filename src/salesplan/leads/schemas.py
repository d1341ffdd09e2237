from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from salesplan.kit.fields import CrmId, Email, Short
from salesplan.kit.schemas import ApiModel, StrictBody

LeadStatus = Literal["new", "working", "qualified", "disqualified", "converted"]


class LeadIn(StrictBody):
    first_name: Short | None = None
    last_name: Short | None = None
    email: Email | None = None
    company: Short | None = None
    title: Short | None = None
    status: LeadStatus = "new"
    source: Short | None = None
    crm_id: CrmId | None = None


class LeadPatch(StrictBody):
    not_null = ("status",)  # may be left out, never null (400)
    first_name: Short | None = None
    last_name: Short | None = None
    email: Email | None = None
    company: Short | None = None
    title: Short | None = None
    status: LeadStatus | None = None
    source: Short | None = None
    crm_id: CrmId | None = None


class LeadOut(ApiModel):
    id: uuid.UUID
    first_name: str | None
    last_name: str | None
    full_name: str
    email: str | None
    company: str | None
    title: str | None
    status: str
    source: str | None
    crm_id: str | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
