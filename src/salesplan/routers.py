"""The API's routers under /api/v1: one line per domain. `create_app` mounts them, and the MCP
tool set is derived from their flagged routes (`salesplan.mcp.tools.register_api_tools`)."""

from __future__ import annotations

from fastapi import APIRouter

from salesplan.accounts.router import router as accounts_router
from salesplan.buying_groups.router import router as buying_groups_router
from salesplan.calendar.router import router as calendar_router
from salesplan.contacts.router import router as contacts_router
from salesplan.engage.delivery.router import router as engage_delivery_router
from salesplan.engage.router import router as engage_router
from salesplan.feed.router import router as feed_router
from salesplan.leads.router import router as leads_router
from salesplan.meta.router import router as meta_router
from salesplan.oauth.router import router as oauth_router
from salesplan.opportunities.router import router as opportunities_router
from salesplan.organizations.router import router as organizations_router
from salesplan.plans.children_router import router as plan_children_router
from salesplan.plans.router import my_tasks_router
from salesplan.plans.router import router as plans_router
from salesplan.relationship_maps.router import router as relationship_maps_router
from salesplan.rooms.router import router as rooms_router
from salesplan.webhooks.router import router as webhooks_router


def api_routers() -> list[tuple[str, APIRouter, bool]]:
    """(prefix under /api/v1, router, in the OpenAPI document). One line per domain."""
    return [
        ("", meta_router, True),
        ("/organizations", organizations_router, True),
        ("/subscribers", organizations_router, False),
        ("/plans", plans_router, True),
        ("/plans", plan_children_router, True),
        ("/plans", rooms_router, True),
        ("/tasks", my_tasks_router, True),
        ("/oauth", oauth_router, True),
        ("/accounts", accounts_router, True),
        ("/buying-groups", buying_groups_router, True),
        ("", contacts_router, True),
        ("/opportunities", opportunities_router, True),
        ("/leads", leads_router, True),
        ("/relationship-maps", relationship_maps_router, True),
        ("/engage", engage_router, True),
        ("", engage_delivery_router, True),
        ("/calendar", calendar_router, True),
        ("", feed_router, True),
        ("/webhooks", webhooks_router, True),
    ]
