"""flat lists: an (organization, sort key, id) index per sortBy of every organization-wide list

Revision ID: e34cbf5a42a7
Revises: 028ee5828e16
Create Date: 2026-11-27 12:00:00.000000
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "e34cbf5a42a7"
down_revision: str | None = "028ee5828e16"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = sa.text("archived_at IS NULL")

# A cursor page (kit.pagination's keyset) is one index range in page order whatever the list's
# size when an index leads with the list's equalities (the organization, and the user for a
# user's own list) and then holds the sort key and the id. (index, table, columns); an index
# named `…_live` holds the rows not archived only (what the list shows unless asked).
NEW = [
    ("ix_accounts_org_name_live", "accounts", ["name"]),
    ("ix_contacts_org_last_name_live", "contacts", ["last_name"]),
    ("ix_contacts_org_email_live", "contacts", ["email"]),
    ("ix_opportunities_org_name_live", "opportunities", ["name"]),
    ("ix_opportunities_org_close_date_live", "opportunities", ["close_date"]),
    ("ix_leads_org_last_name_live", "leads", ["last_name"]),
    ("ix_leads_org_email_live", "leads", ["email"]),
    ("ix_buying_groups_org_created_live", "buying_groups", ["created_at"]),
    ("ix_buying_groups_org_updated_live", "buying_groups", ["updated_at"]),
    ("ix_buying_groups_org_name_live", "buying_groups", ["name"]),
    ("ix_relationship_maps_org_updated", "relationship_maps", ["updated_at"]),
    ("ix_plan_tasks_org_assigned_to_created_live", "plan_tasks", ["assigned_to_id", "created_at"]),
    ("ix_plan_tasks_org_assigned_to_updated_live", "plan_tasks", ["assigned_to_id", "updated_at"]),
    ("ix_plan_tasks_org_assigned_to_title_live", "plan_tasks", ["assigned_to_id", "title"]),
    ("ix_engage_templates_org_updated_live", "engage_templates", ["updated_at"]),
    ("ix_engage_templates_org_name_live", "engage_templates", ["name"]),
    ("ix_engage_drafts_org_updated", "engage_drafts", ["updated_at"]),
    ("ix_engage_lists_org_updated_live", "engage_lists", ["updated_at"]),
    ("ix_engage_lists_org_name_live", "engage_lists", ["name"]),
    ("ix_engage_campaigns_org_updated", "engage_campaigns", ["updated_at"]),
    ("ix_engage_campaigns_org_name", "engage_campaigns", ["name"]),
    ("ix_engage_messages_org_updated", "engage_messages", ["updated_at"]),
    ("ix_engage_suppressions_org_email", "engage_suppressions", ["email"]),
    ("ix_calendar_events_org_user_created", "calendar_events", ["user_id", "created_at"]),
    ("ix_calendar_events_org_user_updated", "calendar_events", ["user_id", "updated_at"]),
    ("ix_calendar_connections_org_user_created", "calendar_connections", ["user_id", "created_at"]),
    ("ix_webhook_endpoints_org_created", "webhook_endpoints", ["created_at"]),
    ("ix_webhook_endpoints_org_updated", "webhook_endpoints", ["updated_at"]),
]
# Indexes that lacked the id (ORDER BY key, id then sorted the ties): made again with it.
WIDENED = [
    (f"ix_engage_{name}_org_created", f"engage_{name}", ["created_at"])
    for name in ("templates", "drafts", "lists", "campaigns")
] + [("ix_calendar_events_org_user_start", "calendar_events", ["user_id", "start_at"])]


def upgrade() -> None:
    for name, table, columns in WIDENED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, ["organization_id", *columns, "id"])
    for name, table, columns in NEW:
        live = name.endswith("_live")
        where: dict[str, Any] = {"postgresql_where": LIVE, "sqlite_where": LIVE} if live else {}
        op.create_index(name, table, ["organization_id", *columns, "id"], **where)


def downgrade() -> None:
    for name, table, _ in NEW:
        op.drop_index(name, table_name=table)
    for name, table, columns in WIDENED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, ["organization_id", *columns])
