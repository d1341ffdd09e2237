"""getMeta."""

from __future__ import annotations

from typing import Any

from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import NoArgs, mcp_tool
from salesplan.meta.router import build_meta_document


@mcp_tool(
    "getMeta",
    scope=None,
    group="foundation",
    organization=False,
    title="Service metadata",
    description="""
Describe this salesplan service: its name and version, the approved OAuth/API-key scopes
(`scopes`), pagination defaults and maxima (`pagination`), the rate-limit configuration
(`rateLimiting`: enabled, store, windowSeconds and per-group read/write limits per minute) and
the MCP endpoint URL. Needs no scope and no organization. Use it to learn which scopes exist or
how fast you may call; it does not tell what this token may do (a tool without the needed scope
answers `forbidden` with `details.requiredScope`). Counts against the `foundation` write limit.
""",
)
async def get_meta(call: ToolCall, args: NoArgs) -> Any:
    return build_meta_document(call.settings, call.app.state.rate_limiter)
