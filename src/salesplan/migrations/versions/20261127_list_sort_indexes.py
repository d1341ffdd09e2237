"""flat lists: an (organization, sort key, id) index per sortBy of every organization-wide list

Revision ID: e34cbf5a42a7
Revises: 9a4e7c2b1d58
Create Date: 2026-11-27 12:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "e34cbf5a42a7"
down_revision: str | None = "9a4e7c2b1d58"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A cursor page (kit.pagination's keyset) is one index range in page order whatever the list's
# size when an index leads with the list's equalities (the organization, and the user for a
# user's own list) and then holds the sort key and the id. (index, table, columns)
NEW = [
    ("ix_accounts_org_name", "accounts", ["name"]),
    ("ix_contacts_org_last_name", "contacts", ["last_name"]),
    ("ix_contacts_org_email", "contacts", ["email"]),
    ("ix_opportunities_org_name", "opportunities", ["name"]),
    ("ix_opportunities_org_close_date", "opportunities", ["close_date"]),
    ("ix_leads_org_last_name", "leads", ["last_name"]),
    ("ix_leads_org_email", "leads", ["email"]),
    ("ix_buying_groups_org_created", "buying_groups", ["created_at"]),
    ("ix_buying_groups_org_updated", "buying_groups", ["updated_at"]),
    ("ix_buying_groups_org_name", "buying_groups", ["name"]),
    ("ix_relationship_maps_org_updated", "relationship_maps", ["updated_at"]),
    ("ix_plan_tasks_org_assigned_to_created", "plan_tasks", ["assigned_to_id", "created_at"]),
    ("ix_plan_tasks_org_assigned_to_updated", "plan_tasks", ["assigned_to_id", "updated_at"]),
    ("ix_plan_tasks_org_assigned_to_title", "plan_tasks", ["assigned_to_id", "title"]),
    ("ix_engage_templates_org_updated", "engage_templates", ["updated_at"]),
    ("ix_engage_templates_org_name", "engage_templates", ["name"]),
    ("ix_engage_drafts_org_updated", "engage_drafts", ["updated_at"]),
    ("ix_engage_lists_org_updated", "engage_lists", ["updated_at"]),
    ("ix_engage_lists_org_name", "engage_lists", ["name"]),
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
        op.create_index(name, table, ["organization_id", *columns, "id"])


def downgrade() -> None:
    for name, table, _ in NEW:
        op.drop_index(name, table_name=table)
    for name, table, columns in WIDENED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, ["organization_id", *columns])
