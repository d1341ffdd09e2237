"""The page behind a relationship map's `mapUrl`: GET /maps/{buyerMapId}, the map drawn as
server-rendered SVG (contact cards coloured by support status, and their edges) for a signed-in
member of the map's organization. Anyone else gets the same 404 as for an unknown id."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from starlette.responses import Response

from salesplan.db_dependencies import SessionDep
from salesplan.kit.scoping import OrgScope
from salesplan.models.crm import Account, RelationshipMap
from salesplan.models.identity import Organization, User
from salesplan.relationship_maps.repository import (
    ENTITY_MODELS,
    RelationshipMapRepository,
    find_member_map,
)
from salesplan.web.deps import SignedInUser
from salesplan.web.map_layout import (
    TONES,
    Person,
    clip,
    executives,
    layout,
    pill_width,
    shown,
)
from salesplan.web.pages import render

router = APIRouter(include_in_schema=False)

_ENTITY_LABELS = {"Account": "Account", "BuyingGroup": "Buying group", "Opportunity": "Opportunity"}


async def _people(maps: RelationshipMapRepository, map_id: uuid.UUID) -> list[Person]:
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
            executive_id=placement.executive_id,
        )
        for placement, contact in await maps.placed_contacts(map_id)
    ]


async def _entity(maps: RelationshipMapRepository, row: RelationshipMap) -> tuple[str, str | None]:
    """The name of the map's entity, and the account it belongs to when that is another row."""
    model = ENTITY_MODELS.get(row.entity_type, Account)
    name = await maps.name_of(model, row.entity_id) or "Deleted record"
    if model is Account:
        return name, None
    return name, await maps.name_of(Account, row.account_id)


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
    row = await find_member_map(session, user.id, map_id)
    if row is None:
        return not_found(request, user)
    maps = RelationshipMapRepository(session, OrgScope(row.organization_id))
    people = await _people(maps, row.id)
    drawing = layout(row.map or {}, people, row.orientation)
    entity_name, account_name = await _entity(maps, row)
    organization = await session.get(Organization, row.organization_id)
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
            "executives": executives(people),
            "drawing": drawing,
            "tones": [(tone, label, counts[tone]) for tone, label in TONES],
            "clip": clip,
            "pill_width": pill_width,
            "shown": shown,
        },
    )
