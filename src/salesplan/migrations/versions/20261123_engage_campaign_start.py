"""engage campaign start: when a campaign was started and by whom, an enrollment's last send and
the reason it ended

Revision ID: 5e3b1c7d9a42
Revises: 7c59853ccf6b
Create Date: 2026-11-23 10:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import salesplan.models.base

revision: str = "5e3b1c7d9a42"
down_revision: str | None = "7c59853ccf6b"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("engage_campaigns", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("started_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("started_by_id", sa.Uuid(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_engage_campaigns_started_by_id_users"),
            "users",
            ["started_by_id"],
            ["id"],
            ondelete="SET NULL",
        )
    with op.batch_alter_table("engage_enrollments", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "last_sent_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=True
            )
        )
        batch_op.add_column(sa.Column("reason", sa.String(length=32), nullable=True))
        batch_op.create_index(
            "ix_engage_enrollments_campaign_state", ["campaign_id", "state"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("engage_enrollments", schema=None) as batch_op:
        batch_op.drop_index("ix_engage_enrollments_campaign_state")
        batch_op.drop_column("reason")
        batch_op.drop_column("last_sent_at")
    with op.batch_alter_table("engage_campaigns", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_engage_campaigns_started_by_id_users"), type_="foreignkey"
        )
        batch_op.drop_column("started_by_id")
        batch_op.drop_column("started_at")
