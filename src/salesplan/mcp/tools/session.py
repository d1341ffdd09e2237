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
    # At most ~200 characters (contract §9, 2026-11-27); the rest is in the instructions.
    description=(
        "Choose the organization the following calls of this MCP session act in (after "
        "listOrganizations, when the token reaches several); `headers.xOrganizationId` on a "
        "call still wins."
    ),
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
