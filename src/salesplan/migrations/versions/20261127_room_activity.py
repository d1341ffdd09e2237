"""room activity: what buyers do in a plan's room (contract §16 "Activity and engagement"),
the sellers' digests of it (to the plan's creator, now kept) and the buyers' due-date
reminders

Revision ID: 98f2fb6ad618
Revises: bd587fd3e5d8
Create Date: 2026-11-27 15:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from salesplan.models.base import UTCDateTime

revision: str = "98f2fb6ad618"
down_revision: str | None = "bd587fd3e5d8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _organization(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["organization_id"],
        ["organizations.id"],
        name=op.f(f"fk_{table}_organization_id_organizations"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.add_column("plan_shares", sa.Column("view_counted_at", UTCDateTime(), nullable=True))
    op.add_column("plans", sa.Column("created_by_id", sa.Uuid(), nullable=True))
    op.create_table(
        "plan_activity",
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("share_id", sa.Uuid(), nullable=True),
        sa.Column("contact_id", sa.Uuid(), nullable=True),
        sa.Column("task_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_plan_activity_contact_id_contacts"),
            ondelete="SET NULL",
        ),
        _organization("plan_activity"),
        sa.ForeignKeyConstraint(
            ["plan_id"],
            ["plans.id"],
            name=op.f("fk_plan_activity_plan_id_plans"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_activity_share_id_plan_shares"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["plan_tasks.id"],
            name=op.f("fk_plan_activity_task_id_plan_tasks"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_activity")),
    )
    op.create_index(
        "ix_plan_activity_org_plan_created",
        "plan_activity",
        ["organization_id", "plan_id", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_activity_organization_id"), "plan_activity", ["organization_id"], unique=False
    )
    op.create_table(
        "plan_room_notices",
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("due_at", UTCDateTime(), nullable=True),
        sa.Column("since", UTCDateTime(), nullable=True),
        sa.Column("sent_at", UTCDateTime(), nullable=True),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        _organization("plan_room_notices"),
        sa.ForeignKeyConstraint(
            ["plan_id"],
            ["plans.id"],
            name=op.f("fk_plan_room_notices_plan_id_plans"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("plan_id", name=op.f("pk_plan_room_notices")),
    )
    op.create_index(
        op.f("ix_plan_room_notices_due_at"), "plan_room_notices", ["due_at"], unique=False
    )
    op.create_index(
        op.f("ix_plan_room_notices_organization_id"),
        "plan_room_notices",
        ["organization_id"],
        unique=False,
    )
    op.create_table(
        "plan_task_reminders",
        sa.Column("task_id", sa.Uuid(), nullable=False),
        sa.Column("contact_id", sa.Uuid(), nullable=False),
        sa.Column("sent_on", sa.Date(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_plan_task_reminders_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        _organization("plan_task_reminders"),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["plan_tasks.id"],
            name=op.f("fk_plan_task_reminders_task_id_plan_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_task_reminders")),
        sa.UniqueConstraint(
            "task_id", "contact_id", name=op.f("uq_plan_task_reminders_task_id_contact_id")
        ),
    )
    op.create_index(
        op.f("ix_plan_task_reminders_organization_id"),
        "plan_task_reminders",
        ["organization_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("plan_task_reminders")
    op.drop_table("plan_room_notices")
    op.drop_table("plan_activity")
    with op.batch_alter_table("plan_shares") as batch:
        batch.drop_column("view_counted_at")
    with op.batch_alter_table("plans") as batch:
        batch.drop_column("created_by_id")
