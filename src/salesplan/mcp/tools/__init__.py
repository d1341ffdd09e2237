"""Tool adapters, one module per domain. Importing a module registers its tools: ADD ONE LINE
PER MODULE here. Each adapter is a `@mcp_tool(...)` function over the REST route's service."""

from salesplan.mcp.tools import (
    accounts,
    calendar,
    contacts,
    feed,
    meta,
    opportunities,
    organizations,
    plans,
    relationship_maps,
)

__all__ = [
    "accounts",
    "calendar",
    "contacts",
    "feed",
    "meta",
    "opportunities",
    "organizations",
    "plans",
    "relationship_maps",
]
