"""Entity resolution: what a plan is attached to (contract §7 "plans": USER, ACCOUNT via
its default buying group, BUYING_GROUP, OPPORTUNITY), each checked in the organization.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.dependencies import check_user_backed
from salesplan.auth.principal import RequestContext
from salesplan.errors import Unprocessable, ValidationFailed
from salesplan.models.crm import Account, BuyingGroup, Opportunity
from salesplan.models.plans import Plan
from salesplan.plans import write_repository as writes
from salesplan.plans.checks import missing


@dataclass
class Attachment:
    entity_type: str
    entity_id: uuid.UUID
    opportunity_id: uuid.UUID | None = None
    buying_group_id: uuid.UUID | None = None
    user_id: uuid.UUID | None = None


async def resolve_entity(
    session: AsyncSession, ctx: RequestContext, entity_type: str, entity_id: uuid.UUID | None
) -> Attachment:
    if entity_type == "USER":
        if entity_id is None:
            check_user_backed(ctx.principal)
            assert ctx.user_id is not None
            return Attachment("USER", ctx.user_id, user_id=ctx.user_id)
        if not await writes.is_member(session, ctx, entity_id):
            raise missing("entityId", "User", entity_id)
        return Attachment("USER", entity_id, user_id=entity_id)
    if entity_id is None:
        raise ValidationFailed.at(["body", "entityId"], "entityId is required for this entityType.")
    if entity_type == "ACCOUNT":
        if not await writes.is_live(session, ctx, Account, entity_id):
            raise missing("entityId", "Account", entity_id)
        group_id = await writes.default_group_id(session, ctx, entity_id)
        if group_id is None:
            raise Unprocessable(
                "The account has no default buying group.",
                details={"field": "entityId", "id": str(entity_id)},
            )
        return Attachment("BUYING_GROUP", group_id, buying_group_id=group_id)
    model: Any = BuyingGroup if entity_type == "BUYING_GROUP" else Opportunity
    if not await writes.is_live(session, ctx, model, entity_id):
        raise missing("entityId", model.__display_name__, entity_id)
    if entity_type == "BUYING_GROUP":
        return Attachment("BUYING_GROUP", entity_id, buying_group_id=entity_id)
    return Attachment("OPPORTUNITY", entity_id, opportunity_id=entity_id)


def attach(plan: Plan, a: Attachment) -> None:
    plan.entity_type = a.entity_type
    plan.entity_id = a.entity_id
    plan.opportunity_id = a.opportunity_id
    plan.buying_group_id = a.buying_group_id
    plan.user_id = a.user_id
