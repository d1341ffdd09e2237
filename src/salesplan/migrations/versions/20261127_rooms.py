"""rooms: buyer rooms (contract §16): shares and their links, codes and sessions, the room's
settings, task comments; a task's assignee may be a contact (no foreign key to users); sealed
secrets of transactional e-mail in the Engage outbox

Revision ID: 028ee5828e16
Revises: 9a4e7c2b1d58
Create Date: 2026-11-27 11:33:52.768663
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from salesplan.models.base import JSONType, UTCDateTime

revision: str = "028ee5828e16"
down_revision: str | None = "9a4e7c2b1d58"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "plan_rooms",
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("hidden_milestone_ids", JSONType, nullable=False),
        sa.Column("hidden_goal_ids", JSONType, nullable=False),
        sa.Column("hidden_task_ids", JSONType, nullable=False),
        sa.Column("welcome_message", sa.Text(), nullable=True),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_rooms_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plan_id"], ["plans.id"], name=op.f("fk_plan_rooms_plan_id_plans"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("plan_id", name=op.f("pk_plan_rooms")),
    )
    op.create_index(
        op.f("ix_plan_rooms_organization_id"), "plan_rooms", ["organization_id"], unique=False
    )
    op.create_table(
        "plan_shares",
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("contact_id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("allow_invites", sa.Boolean(), nullable=False),
        sa.Column("invited_by_share_id", sa.Uuid(), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.Column("last_viewed_at", UTCDateTime(), nullable=True),
        sa.Column("created_by_id", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_plan_shares_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_plan_shares_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["invited_by_share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_shares_invited_by_share_id_plan_shares"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_shares_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plan_id"], ["plans.id"], name=op.f("fk_plan_shares_plan_id_plans"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_shares")),
    )
    op.create_index(op.f("ix_plan_shares_contact_id"), "plan_shares", ["contact_id"], unique=False)
    op.create_index(
        "ix_plan_shares_org_plan_created",
        "plan_shares",
        ["organization_id", "plan_id", "created_at", "id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_shares_organization_id"), "plan_shares", ["organization_id"], unique=False
    )
    op.create_index(op.f("ix_plan_shares_plan_id"), "plan_shares", ["plan_id"], unique=False)
    op.create_table(
        "plan_share_codes",
        sa.Column("share_id", sa.Uuid(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("used_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_share_codes_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_share_codes_share_id_plan_shares"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_share_codes")),
    )
    op.create_index(
        op.f("ix_plan_share_codes_organization_id"),
        "plan_share_codes",
        ["organization_id"],
        unique=False,
    )
    op.create_index(
        "ix_plan_share_codes_share_created",
        "plan_share_codes",
        ["share_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "plan_share_links",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("share_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_share_links_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_share_links_share_id_plan_shares"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_plan_share_links")),
    )
    op.create_index(
        op.f("ix_plan_share_links_organization_id"),
        "plan_share_links",
        ["organization_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_share_links_share_id"), "plan_share_links", ["share_id"], unique=False
    )
    op.create_table(
        "plan_share_sessions",
        sa.Column("share_id", sa.Uuid(), nullable=False),
        sa.Column("session_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("flash", JSONType, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_share_sessions_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_share_sessions_share_id_plan_shares"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_share_sessions")),
        sa.UniqueConstraint("session_hash", name=op.f("uq_plan_share_sessions_session_hash")),
    )
    op.create_index(
        op.f("ix_plan_share_sessions_organization_id"),
        "plan_share_sessions",
        ["organization_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_share_sessions_share_id"), "plan_share_sessions", ["share_id"], unique=False
    )
    op.create_table(
        "plan_task_comments",
        sa.Column("plan_id", sa.Uuid(), nullable=False),
        sa.Column("task_id", sa.Uuid(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("internal", sa.Boolean(), nullable=False),
        sa.Column("author_type", sa.String(length=16), nullable=False),
        sa.Column("author_user_id", sa.Uuid(), nullable=True),
        sa.Column("author_contact_id", sa.Uuid(), nullable=True),
        sa.Column("author_name", sa.String(length=255), nullable=False),
        sa.Column("share_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_contact_id"],
            ["contacts.id"],
            name=op.f("fk_plan_task_comments_author_contact_id_contacts"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["author_user_id"],
            ["users.id"],
            name=op.f("fk_plan_task_comments_author_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_plan_task_comments_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["plan_id"],
            ["plans.id"],
            name=op.f("fk_plan_task_comments_plan_id_plans"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["share_id"],
            ["plan_shares.id"],
            name=op.f("fk_plan_task_comments_share_id_plan_shares"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["plan_tasks.id"],
            name=op.f("fk_plan_task_comments_task_id_plan_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_task_comments")),
    )
    op.create_index(
        "ix_plan_task_comments_org_task_created",
        "plan_task_comments",
        ["organization_id", "task_id", "created_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_task_comments_organization_id"),
        "plan_task_comments",
        ["organization_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_plan_task_comments_plan_id"), "plan_task_comments", ["plan_id"], unique=False
    )
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sealed", sa.Text(), nullable=True))
    # A task's assignee is a user (seller side) or a contact of the plan's account (buyer
    # side): checked by the plans service, no longer a foreign key to users.
    with op.batch_alter_table("plan_tasks", schema=None) as batch_op:
        batch_op.drop_constraint("fk_plan_tasks_assigned_to_id_users", type_="foreignkey")


def downgrade() -> None:
    with op.batch_alter_table("plan_tasks", schema=None) as batch_op:
        batch_op.create_foreign_key(
            "fk_plan_tasks_assigned_to_id_users",
            "users",
            ["assigned_to_id"],
            ["id"],
            ondelete="SET NULL",
        )
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.drop_column("sealed")
    op.drop_index(op.f("ix_plan_task_comments_plan_id"), table_name="plan_task_comments")
    op.drop_index(op.f("ix_plan_task_comments_organization_id"), table_name="plan_task_comments")
    op.drop_index("ix_plan_task_comments_org_task_created", table_name="plan_task_comments")
    op.drop_table("plan_task_comments")
    op.drop_index(op.f("ix_plan_share_sessions_share_id"), table_name="plan_share_sessions")
    op.drop_index(op.f("ix_plan_share_sessions_organization_id"), table_name="plan_share_sessions")
    op.drop_table("plan_share_sessions")
    op.drop_index(op.f("ix_plan_share_links_share_id"), table_name="plan_share_links")
    op.drop_index(op.f("ix_plan_share_links_organization_id"), table_name="plan_share_links")
    op.drop_table("plan_share_links")
    op.drop_index("ix_plan_share_codes_share_created", table_name="plan_share_codes")
    op.drop_index(op.f("ix_plan_share_codes_organization_id"), table_name="plan_share_codes")
    op.drop_table("plan_share_codes")
    op.drop_index(op.f("ix_plan_shares_plan_id"), table_name="plan_shares")
    op.drop_index(op.f("ix_plan_shares_organization_id"), table_name="plan_shares")
    op.drop_index("ix_plan_shares_org_plan_created", table_name="plan_shares")
    op.drop_index(op.f("ix_plan_shares_contact_id"), table_name="plan_shares")
    op.drop_table("plan_shares")
    op.drop_index(op.f("ix_plan_rooms_organization_id"), table_name="plan_rooms")
    op.drop_table("plan_rooms")
