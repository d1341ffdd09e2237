from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from salesplan.kit.schemas import ApiModel, FreeForm, StrictBody

EntityType = Literal["Account", "BuyingGroup", "Opportunity"]
Orientation = Literal["vertical", "horizontal"]
Attribute = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class MapGraph(BaseModel):
    """`map`: nodes, edges and viewport; their inner structure is the client's."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    nodes: list[FreeForm] = Field(default_factory=list)
    edges: list[FreeForm] = Field(default_factory=list)
    viewport: FreeForm = Field(default_factory=lambda: {"x": 0, "y": 0, "zoom": 1})


class RelationshipMapIn(StrictBody):
    entity_type: EntityType
    entity_id: uuid.UUID
    map: MapGraph | None = None
    orientation: Orientation = "vertical"


class RelationshipMapPatch(StrictBody):
    map: MapGraph | None = None
    orientation: Orientation | None = None


class MapContactUpsert(StrictBody):
    support_status: Attribute | None = None
    decision_status: Attribute | None = None
    contact_status: Attribute | None = None
    functional_role: Attribute | None = None
    executive_id: Attribute | None = None
    buying_group_id: uuid.UUID | None = None


class MapContactPerson(ApiModel):
    full_name: str
    email: str | None


class MapContactOut(ApiModel):
    contact_id: uuid.UUID
    support_status: str | None
    decision_status: str | None
    contact_status: str | None
    functional_role: str | None
    executive_id: str | None
    contact: MapContactPerson


class BuyerMapOut(ApiModel):
    id: uuid.UUID
    entity_id: uuid.UUID
    entity_type: str
    map: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    orientation: str
    map_url: str
    contacts: list[MapContactOut]
    created_by_id: uuid.UUID | None
    updated_by_id: uuid.UUID | None


class BuyerMapResponse(ApiModel):
    buyer_map: BuyerMapOut
