"""incremental sync: (organization, updated_at, id) indexes for updatedSince

Revision ID: 4b7e2c9a1d63
Revises: 6d2f9b8e4c17
Create Date: 2026-11-25 22:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "4b7e2c9a1d63"
down_revision: str | None = "6d2f9b8e4c17"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# listAccounts, listContacts/listAccountContacts, listOpportunities, listLeads and listPlans with
# updatedSince (or sortBy=updatedAt): an index range scan in (updatedAt, id) order, archived rows
# included (a syncing client asks for them to learn of deletions). Plans' live partial index
# stays for the default list.
TABLES = ("accounts", "contacts", "opportunities", "leads", "plans")


def upgrade() -> None:
    for table in TABLES:
        op.create_index(f"ix_{table}_org_updated", table, ["organization_id", "updated_at", "id"])


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_org_updated", table_name=table)
