from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from salesplan.kit.fields import Name, Text
from salesplan.kit.schemas import ApiModel, StrictBody


class BuyingGroupIn(StrictBody):
    account_id: uuid.UUID
    name: Name
    description: Text | None = None
    opportunity_id: uuid.UUID | None = None
    member_contact_ids: list[uuid.UUID] = Field(default_factory=list, max_length=1000)


class BuyingGroupPatch(StrictBody):
    not_null = ("name",)  # may be left out, never null (400)
    name: Name | None = None
    description: Text | None = None
    opportunity_id: uuid.UUID | None = None
    member_contact_ids: list[uuid.UUID] | None = Field(default=None, max_length=1000)


class BuyingGroupOut(ApiModel):
    id: uuid.UUID
    account_id: uuid.UUID
    name: str
    description: str | None
    is_default: bool
    opportunity_id: uuid.UUID | None
    member_contact_ids: list[uuid.UUID]
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
