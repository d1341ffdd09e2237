"""The tool set: the REST operations flagged `@as_tool(...)` in the API's routers (derived from
their declarations, salesplan.mcp.derive), plus the tools that have no REST operation
(setActiveOrganization, in `session.py`, registered when imported). `build_server` registers the
derived ones by calling `register_api_tools()`."""

from salesplan.mcp.derive import register_routes
from salesplan.mcp.tools import session
from salesplan.routers import api_routers

__all__ = ["register_api_tools", "session"]

_registered = False


def register_api_tools() -> None:
    """Register the tool of every flagged API route (once per process: a tool's argument model
    is derived anew each time, and a name is registered once)."""
    global _registered
    if not _registered:
        register_routes(router for _, router, _ in api_routers())
        _registered = True
