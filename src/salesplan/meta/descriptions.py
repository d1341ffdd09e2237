"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

GET_META = """
Describe this salesplan service: its name and version, the approved OAuth/API-key scopes
(`scopes`), pagination defaults and maxima (`pagination`), the rate-limit configuration
(`rateLimiting`: enabled, store, windowSeconds and per-group read/write limits per minute) and
the MCP endpoint URL. Needs no scope and no organization. Use it to learn which scopes exist or
how fast you may call; it does not tell what this token may do (a tool without the needed scope
answers `forbidden` with `details.requiredScope`). Counts against the `foundation` write limit.
"""

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
GET_META_BRIEF = (
    "Describe this service: name, version, the scopes, pagination defaults and maxima, the "
    "rate limits and the MCP URL. Needs no scope and no organization."
)
