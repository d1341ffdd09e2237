"""Organizations (also called subscribers): list, read one, list its users."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Response

from salesplan.auth.dependencies import require_principal
from salesplan.auth.principal import PrincipalContext
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool
from salesplan.organizations import descriptions as text
from salesplan.organizations import service
from salesplan.organizations.schemas import OrganizationOut, OrganizationUserOut

router = APIRouter(tags=["organizations"])

OrgRead = Annotated[PrincipalContext, require_principal("organizations:read", "organizations")]


@router.get(
    "",
    operation_id="listOrganizations",
    response_model=ListResponse[OrganizationOut],
    summary="List organizations",
    description=text.LIST_ORGANIZATIONS,
)
@as_tool(brief=text.LIST_ORGANIZATIONS_BRIEF)
async def list_organizations(
    ctx: OrgRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))],
) -> Response:
    """List the organizations the token can reach."""
    items, meta = await service.list_organizations(session, ctx.principal, params, codec)
    return json_response(
        ListResponse[OrganizationOut](
            data=[OrganizationOut.model_validate(o) for o in items], pagination=meta
        )
    )


@router.get(
    "/{organizationId}",
    operation_id="getOrganization",
    response_model=OrganizationOut,
    summary="Read an organization",
    description=text.GET_ORGANIZATION,
)
@as_tool(docs=text.GET_ORGANIZATION_ARGS)
async def get_organization(
    organizationId: uuid.UUID, ctx: OrgRead, session: SessionDep
) -> Response:
    """Read one organization."""
    org = await service.get_organization(session, ctx.principal, organizationId)
    return json_response(OrganizationOut.model_validate(org))


@router.get(
    "/{organizationId}/users",
    operation_id="listOrganizationUsers",
    response_model=ListResponse[OrganizationUserOut],
    summary="List an organization's users",
    description=text.LIST_ORGANIZATION_USERS,
)
@as_tool(docs=text.LIST_ORGANIZATION_USERS_ARGS)
async def list_organization_users(
    organizationId: uuid.UUID,
    ctx: OrgRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "email", "fullName"))],
) -> Response:
    """List the users of an organization with their roles."""
    rows, meta = await service.list_organization_users(
        session, ctx.principal, organizationId, params, codec
    )
    return json_response(
        ListResponse[OrganizationUserOut](
            data=[OrganizationUserOut.model_validate(r) for r in rows], pagination=meta
        )
    )
