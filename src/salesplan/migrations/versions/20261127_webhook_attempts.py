"""webhooks: each try of a delivery, thin payloads per endpoint, replays marked (contract §13
2026-11-27)

Revision ID: 924a355da063
Revises: e34cbf5a42a7
Create Date: 2026-11-27 15:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from salesplan.models.base import UTCDateTime

revision: str = "924a355da063"
down_revision: str | None = "e34cbf5a42a7"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as batch:
        batch.add_column(
            sa.Column("payload", sa.String(length=16), nullable=False, server_default="snapshot")
        )
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(
            sa.Column("replay", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "webhook_attempts",
        sa.Column("delivery_id", sa.Uuid(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(length=200), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_webhook_attempts_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    op.create_index(
        op.f("ix_webhook_attempts_delivery_id"), "webhook_attempts", ["delivery_id"], unique=False
    )
    op.create_index(
        op.f("ix_webhook_attempts_organization_id"),
        "webhook_attempts",
        ["organization_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_column("replay")
    with op.batch_alter_table("webhook_endpoints") as batch:
        batch.drop_column("payload")
