from __future__ import annotations

import uuid
from datetime import datetime

from salesplan.kit.schemas import ApiModel


class OrganizationOut(ApiModel):
    id: uuid.UUID
    name: str
    slug: str
    created_at: datetime
    updated_at: datetime


class OrganizationUserOut(ApiModel):
    id: uuid.UUID
    email: str
    full_name: str
    role: str
