from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from salesplan.kit.fields import CrmId, Date, Money, MoneyOut, Name
from salesplan.kit.schemas import ApiModel, StrictBody

Stage = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{3}$")]
Probability = Annotated[int, Field(ge=0, le=100)]
Status = Literal["open", "won", "lost"]


class OpportunityIn(StrictBody):
    account_id: uuid.UUID
    name: Name
    stage: Stage | None = None
    amount: Money | None = None
    currency: Currency | None = None
    close_date: Date | None = None
    probability: Probability | None = None
    status: Status = "open"
    owner_id: uuid.UUID | None = None
    crm_id: CrmId | None = None


class OpportunityPatch(StrictBody):
    not_null = ("name", "account_id", "status")  # may be left out, never null (400)
    account_id: uuid.UUID | None = None
    name: Name | None = None
    stage: Stage | None = None
    amount: Money | None = None
    currency: Currency | None = None
    close_date: Date | None = None
    probability: Probability | None = None
    status: Status | None = None
    owner_id: uuid.UUID | None = None
    crm_id: CrmId | None = None


class OpportunityOut(ApiModel):
    id: uuid.UUID
    account_id: uuid.UUID
    name: str
    stage: str | None
    amount: MoneyOut
    currency: str | None
    close_date: date | None
    probability: int | None
    status: str
    owner_id: uuid.UUID | None
    crm_id: str | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
