"""listOrganizations, getOrganization, listOrganizationUsers, setActiveOrganization."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.errors import Forbidden, ServiceUnavailable
from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, mcp_tool
from salesplan.organizations import service
from salesplan.organizations.schemas import OrganizationOut, OrganizationUserOut
from salesplan.ratelimit.store import StoreUnavailable

ORGANIZATION_ID = "Id of the organization (an `id` from listOrganizations)."


class ListOrganizationsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name")


class OrganizationArgs(ToolArgs):
    organization_id: uuid.UUID = Field(description=ORGANIZATION_ID)


class ListOrganizationUsersArgs(ListArgs):
    sortable = ("createdAt", "email", "fullName")

    organization_id: uuid.UUID = Field(description=ORGANIZATION_ID)


@mcp_tool(
    "listOrganizations",
    scope="organizations:read",
    group="organizations",
    organization=False,
    args=ListOrganizationsArgs,
    title="List organizations",
    description="""
List the organizations (workspaces, also called subscribers) this token can reach, as
`{"data": [{id, name, slug, createdAt, updatedAt}], "pagination": {...}}`. Call this first:
every CRM and plan tool works inside one organization. When more than one is listed, call
setActiveOrganization with the one the user means (or pass `headers.xOrganizationId` on each
call); with exactly one, it is used automatically. `search` matches the name; `sortBy` is
createdAt, updatedAt or name. Pages: `page`/`pageSize`, or `limit` then `cursor` =
`pagination.nextCursor` for the next page.
""",
)
async def list_organizations(call: ToolCall, args: ListOrganizationsArgs) -> Any:
    items, meta = await service.list_organizations(
        call.session, call.principal, args.list_params(), call.codec
    )
    return ListResponse(data=[OrganizationOut.model_validate(o) for o in items], pagination=meta)


@mcp_tool(
    "getOrganization",
    scope="organizations:read",
    group="organizations",
    organization=False,
    args=OrganizationArgs,
    title="Read an organization",
    description="""
Read one organization by id: `{id, name, slug, createdAt, updatedAt}`. Use it to confirm an
organization id the user gave you; to find an id by name use listOrganizations with `search`.
An organization this token cannot reach answers `not_found`. It does not change which
organization later calls use (that is setActiveOrganization).
""",
)
async def get_organization(call: ToolCall, args: OrganizationArgs) -> Any:
    org = await service.get_organization(call.session, call.principal, args.organization_id)
    return OrganizationOut.model_validate(org)


@mcp_tool(
    "listOrganizationUsers",
    scope="organizations:read",
    group="organizations",
    organization=False,
    args=ListOrganizationUsersArgs,
    title="List an organization's users",
    description="""
List the users (members) of one organization with their role (admin, member or consultant):
`{"data": [{id, email, fullName, role}], "pagination": {...}}`. Use it to find a user id for
owner or assignee fields (account ownerId, task assignedToId) or to see who is on the team.
`organizationId` is required (from listOrganizations); `search` matches the name or e-mail;
`sortBy` is createdAt, email or fullName.
""",
)
async def list_organization_users(call: ToolCall, args: ListOrganizationUsersArgs) -> Any:
    rows, meta = await service.list_organization_users(
        call.session, call.principal, args.organization_id, args.list_params(), call.codec
    )
    return ListResponse(data=[OrganizationUserOut.model_validate(r) for r in rows], pagination=meta)


@mcp_tool(
    "setActiveOrganization",
    scope="organizations:read",
    group="organizations",
    organization=False,
    args=OrganizationArgs,
    read_only=False,
    title="Set the active organization",
    description="""
Choose the organization that the following tool calls of this MCP session act in, so that you
need not pass `headers.xOrganizationId` each time. Call it after listOrganizations when the
token reaches several organizations, or when the user switches workspace. It is remembered for
this session only (other sessions, even with the same token, are not affected; on session-less
protocol revisions it is remembered for the token until it expires). `headers.xOrganizationId`
on a call still wins. Answers the organization `{id, name, slug, createdAt, updatedAt}`; an
organization this token cannot reach answers `forbidden` (as `headers.xOrganizationId` would);
`service_unavailable` when it could not be remembered (retry, or pass the header).
""",
)
async def set_active_organization(call: ToolCall, args: OrganizationArgs) -> Any:
    if args.organization_id not in call.principal.organization_ids:
        # Choosing an organization is naming one: contract §3, one not reachable is a 403.
        raise Forbidden(
            "The token has no access to this organization.",
            details={
                "organizationId": str(args.organization_id),
                "reason": "organization_not_accessible",
            },
        )
    org = await service.get_organization(call.session, call.principal, args.organization_id)
    try:
        await call.memory.set(org.id)
    except StoreUnavailable:
        raise ServiceUnavailable(
            "The active organization could not be remembered; retry, or name the organization "
            "with headers.xOrganizationId on each call.",
            retry_after=1,
        ) from None
    return OrganizationOut.model_validate(org)
