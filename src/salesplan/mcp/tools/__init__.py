"""The tool set: the REST operations flagged `@as_tool(...)` in the API's routers (derived from
their declarations, salesplan.mcp.derive), plus the tools that have no REST operation
(setActiveOrganization, in `session.py`)."""

from salesplan.app import api_routers
from salesplan.mcp.derive import register_routes
from salesplan.mcp.tools import session

register_routes(router for _, router, _ in api_routers())

__all__ = ["session"]
