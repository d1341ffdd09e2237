"""The approved scope list: the spec's table plus the relationship-map scopes (contract §3)."""

from __future__ import annotations

APPROVED_SCOPES: tuple[str, ...] = (
    "organizations:read",
    "accounts:read",
    "accounts:write",
    "accounts:delete",
    "contacts:read",
    "contacts:write",
    "contacts:delete",
    "opportunities:read",
    "opportunities:write",
    "opportunities:delete",
    "relationship_maps:read",
    "relationship_maps:write",
    "engage:read",
    "engage:write",
    "engage:send",
    "feed:read",
    "plans:read",
    "plans:write",
    "plans:delete",
    "calendar:read",
    "calendar:write",
    "webhooks:read",
    "webhooks:write",
)

# What an MCP client is asked for when it has no scope of its own (the /mcp 401's `scope`).
READ_SCOPES: tuple[str, ...] = tuple(s for s in APPROVED_SCOPES if s.endswith(":read"))

SCOPE_DESCRIPTIONS: dict[str, str] = {
    "organizations:read": "List organizations, read one, list its users",
    "accounts:read": "List and read accounts, leads and buying groups",
    "accounts:write": "Create, update and bulk-create accounts, leads and buying groups",
    "accounts:delete": "Archive accounts, leads and buying groups",
    "contacts:read": "List and read contacts",
    "contacts:write": "Create and update contacts",
    "contacts:delete": "Archive contacts",
    "opportunities:read": "List and read opportunities",
    "opportunities:write": "Create and update opportunities",
    "opportunities:delete": "Archive opportunities",
    "relationship_maps:read": "Read relationship maps",
    "relationship_maps:write": "Create and update relationship maps",
    "engage:read": "Read engagement configuration and activity",
    "engage:write": "Create and update engagement resources",
    "engage:send": "Send approved engagement messages",
    "feed:read": "Read the account inbox, communication analytics and needs-attention",
    "plans:read": "Read plans",
    "plans:write": "Create and update plans, milestones, goals and tasks",
    "plans:delete": "Archive plans, milestones, goals and tasks",
    "calendar:read": "View synced calendar events",
    "calendar:write": "Update your synced calendar events",
    "webhooks:read": "List webhook endpoints and their delivery attempts (admins)",
    "webhooks:write": "Create, change, delete and replay webhook endpoints (admins)",
}


def parse_scopes(value: str | None) -> list[str]:
    """Split a space- or comma-separated scope string, keeping order, dropping duplicates."""
    if not value:
        return []
    seen: dict[str, None] = {}
    for part in value.replace(",", " ").split():
        seen.setdefault(part, None)
    return list(seen)


def unknown_scopes(scopes: list[str]) -> list[str]:
    return [s for s in scopes if s not in APPROVED_SCOPES]
