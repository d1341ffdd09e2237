from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from salesplan.kit.fields import Count, CrmId, Domain, Money, MoneyOut, Name, Short, Text, Url
from salesplan.kit.schemas import ApiModel, BulkRow, StrictBody


class AccountIn(StrictBody):
    """createAccount, updateAccount (PUT replaces: a field left out becomes null)."""

    name: Name
    domain: Domain | None = None
    website: Url | None = None
    industry: Short | None = None
    description: Text | None = None
    crm_id: CrmId | None = None
    owner_id: uuid.UUID | None = None
    annual_revenue: Money | None = None
    employee_count: Count | None = None


class AccountPatch(StrictBody):
    not_null = ("name",)  # may be left out, never null (400)
    name: Name | None = None
    domain: Domain | None = None
    website: Url | None = None
    industry: Short | None = None
    description: Text | None = None
    crm_id: CrmId | None = None
    owner_id: uuid.UUID | None = None
    annual_revenue: Money | None = None
    employee_count: Count | None = None


class AccountOut(ApiModel):
    id: uuid.UUID
    name: str
    domain: str | None
    website: str | None
    industry: str | None
    description: str | None
    crm_id: str | None
    owner_id: uuid.UUID | None
    annual_revenue: MoneyOut
    employee_count: int | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class BulkAccountsIn(StrictBody):
    # Rows are validated one by one in the service: a bad row is a 400 result, not a 400 call;
    # an item that is not an object is not a row (400 for the call).
    accounts: list[BulkRow] = Field(min_length=1, max_length=1000)


class BulkAccountsOut(ApiModel):
    results: list[dict[str, Any]]
    created: int
    failed: int
