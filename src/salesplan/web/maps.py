"""The page behind a relationship map's `mapUrl`: GET /maps/{buyerMapId}, the map drawn as
server-rendered SVG (contact cards coloured by support status, and their edges) for a signed-in
member of the map's organization. Anyone else gets the same 404 as for an unknown id."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.db import SessionDep
from salesplan.kit.scoping import scoped
from salesplan.models.crm import (
    Account,
    BuyingGroup,
    Contact,
    Opportunity,
    RelationshipMap,
    RelationshipMapContact,
)
from salesplan.models.identity import Membership, Organization, User
from salesplan.web.deps import SignedInUser
from salesplan.web.map_layout import TONES, Person, clip, layout, pill_width, shown
from salesplan.web.pages import render

router = APIRouter(include_in_schema=False)

_ENTITY_LABELS = {"Account": "Account", "BuyingGroup": "Buying group", "Opportunity": "Opportunity"}


@dataclass(frozen=True)
class OrgScope:
    """What `kit.scoping` needs: the organization a page reads in (one the user belongs to)."""

    organization_id: uuid.UUID


async def _find_map(
    session: AsyncSession, user: User, map_id: uuid.UUID
) -> tuple[RelationshipMap, OrgScope] | None:
    """The map, in any organization the user is a member of (one query)."""
    row = (
        await session.execute(
            select(RelationshipMap).where(
                RelationshipMap.id == map_id,
                RelationshipMap.organization_id.in_(
                    select(Membership.organization_id).where(Membership.user_id == user.id)
                ),
            )
        )
    ).scalar_one_or_none()
    return None if row is None else (row, OrgScope(row.organization_id))


async def _people(session: AsyncSession, scope: OrgScope, map_id: uuid.UUID) -> list[Person]:
    stmt = scoped(
        select(RelationshipMapContact, Contact)
        .join(Contact, Contact.id == RelationshipMapContact.contact_id)
        .where(RelationshipMapContact.map_id == map_id)
        .order_by(RelationshipMapContact.id),
        scope,
        RelationshipMapContact,
    )
    return [
        Person(
            contact_id=str(placement.contact_id),
            name=contact.full_name or contact.email or "Unnamed contact",
            title=contact.title,
            email=contact.email,
            support_status=placement.support_status,
            decision_status=placement.decision_status,
            contact_status=placement.contact_status,
            functional_role=placement.functional_role,
        )
        for placement, contact in (await session.execute(stmt)).all()
    ]


async def _entity(
    session: AsyncSession, scope: OrgScope, row: RelationshipMap
) -> tuple[str, str | None]:
    """The name of the map's entity, and the account it belongs to when that is another row."""
    model: Any = {"BuyingGroup": BuyingGroup, "Opportunity": Opportunity}.get(
        row.entity_type, Account
    )
    entity = (
        await session.execute(scoped(select(model).where(model.id == row.entity_id), scope))
    ).scalar_one_or_none()
    name = entity.name if entity is not None else "Deleted record"
    if model is Account:
        return name, None
    account = (
        await session.execute(
            scoped(select(Account.name).where(Account.id == row.account_id), scope, Account)
        )
    ).scalar_one_or_none()
    return name, account


def not_found(request: Request, user: User) -> Response:
    return render(
        request,
        "map_missing.html",
        {"title": "Map not found", "user": user},
        status=404,
    )


@router.get("/maps/{buyer_map_id}")
async def map_page(
    request: Request, buyer_map_id: str, session: SessionDep, user: SignedInUser
) -> Response:
    try:
        map_id = uuid.UUID(buyer_map_id)
    except ValueError:
        return not_found(request, user)
    found = await _find_map(session, user, map_id)
    if found is None:
        return not_found(request, user)
    row, scope = found
    people = await _people(session, scope, row.id)
    drawing = layout(row.map or {}, people, row.orientation)
    entity_name, account_name = await _entity(session, scope, row)
    organization = await session.get(Organization, scope.organization_id)
    editor = await session.get(User, row.updated_by_id) if row.updated_by_id else None
    counts = {tone: 0 for tone, _ in TONES}
    for person in people:
        counts[person.tone] += 1
    return render(
        request,
        "map.html",
        {
            "title": f"{entity_name} relationship map",
            "user": user,
            "map": row,
            "entity_kind": _ENTITY_LABELS.get(row.entity_type, row.entity_type),
            "entity_name": entity_name,
            "account_name": account_name,
            "organization": organization,
            "editor": (editor.full_name or editor.email) if editor else None,
            "people": people,
            "drawing": drawing,
            "tones": [(tone, label, counts[tone]) for tone, label in TONES],
            "clip": clip,
            "pill_width": pill_width,
            "shown": shown,
        },
    )
