"""feed own domains: the domains an admin declares the organization's own (contract §12)

Revision ID: 7c41e9b2d5f3
Revises: 6d2c9e41a7b3
Create Date: 2026-11-25 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7c41e9b2d5f3"
down_revision: str | None = "6d2c9e41a7b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feed_own_domains",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("domain", sa.String(length=255), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_feed_own_domains_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_id", "domain", name=op.f("pk_feed_own_domains")),
    )


def downgrade() -> None:
    op.drop_table("feed_own_domains")
