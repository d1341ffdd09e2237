"""setActiveOrganization: the one tool without a REST operation (contract §9). It remembers the
organization in the shared store (`OrganizationMemory`), per principal and MCP session."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.errors import Forbidden, ServiceUnavailable
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ToolArgs, mcp_tool
from salesplan.organizations import service
from salesplan.organizations.schemas import OrganizationOut
from salesplan.ratelimit.store import StoreUnavailable

ORGANIZATION_ID = "Id of the organization (an `id` from listOrganizations)."


class OrganizationArgs(ToolArgs):
    organization_id: uuid.UUID = Field(description=ORGANIZATION_ID)


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
