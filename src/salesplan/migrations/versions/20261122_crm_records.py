"""crm records

Revision ID: 1a13e62a5088
Revises: 35e6bbd0c100
Create Date: 2026-11-22 00:52:15.061025
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import salesplan.models.base

revision: str = "1a13e62a5088"
down_revision: str | None = "35e6bbd0c100"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # `search` uses trigram GIN indexes on PostgreSQL (empty partial indexes on SQLite).
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_table(
        "leads",
        sa.Column("first_name", sa.String(length=255), nullable=True),
        sa.Column("last_name", sa.String(length=255), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("company", sa.String(length=255), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=True),
        sa.Column("crm_id", sa.String(length=255), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("archived_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_leads_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_leads")),
    )
    with op.batch_alter_table("leads", schema=None) as batch_op:
        batch_op.create_index(
            "ix_leads_company_trgm",
            ["company"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"company": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_leads_email_trgm",
            ["email"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"email": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_leads_first_name_trgm",
            ["first_name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"first_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_leads_last_name_trgm",
            ["last_name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"last_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_leads_org_created", ["organization_id", "created_at", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_leads_organization_id"), ["organization_id"], unique=False
        )
        batch_op.create_index(
            "uq_leads_org_crm_id_live",
            ["organization_id", "crm_id"],
            unique=True,
            postgresql_where=sa.text("crm_id IS NOT NULL AND archived_at IS NULL"),
            sqlite_where=sa.text("crm_id IS NOT NULL AND archived_at IS NULL"),
        )

    op.create_table(
        "relationship_maps",
        sa.Column("entity_type", sa.String(length=20), nullable=False),
        sa.Column("entity_id", sa.Uuid(), nullable=False),
        sa.Column("account_id", sa.Uuid(), nullable=False),
        sa.Column("map", salesplan.models.base.JSONType, nullable=False),
        sa.Column("orientation", sa.String(length=20), nullable=False),
        sa.Column("created_by_id", sa.Uuid(), nullable=True),
        sa.Column("updated_by_id", sa.Uuid(), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_relationship_maps_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_relationship_maps_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_relationship_maps_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["updated_by_id"],
            ["users.id"],
            name=op.f("fk_relationship_maps_updated_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_relationship_maps")),
        sa.UniqueConstraint(
            "organization_id",
            "entity_type",
            "entity_id",
            name=op.f("uq_relationship_maps_organization_id_entity_type_entity_id"),
        ),
    )
    with op.batch_alter_table("relationship_maps", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_relationship_maps_account_id"), ["account_id"], unique=False
        )
        batch_op.create_index(
            "ix_relationship_maps_org_created",
            ["organization_id", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_relationship_maps_organization_id"), ["organization_id"], unique=False
        )

    op.create_table(
        "relationship_map_contacts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("map_id", sa.Uuid(), nullable=False),
        sa.Column("contact_id", sa.Uuid(), nullable=False),
        sa.Column("support_status", sa.String(length=100), nullable=True),
        sa.Column("decision_status", sa.String(length=100), nullable=True),
        sa.Column("contact_status", sa.String(length=100), nullable=True),
        sa.Column("functional_role", sa.String(length=100), nullable=True),
        sa.Column("executive_id", sa.String(length=100), nullable=True),
        sa.Column("created_at", salesplan.models.base.UTCDateTime(timezone=True), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_relationship_map_contacts_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["map_id"],
            ["relationship_maps.id"],
            name=op.f("fk_relationship_map_contacts_map_id_relationship_maps"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_relationship_map_contacts_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_relationship_map_contacts")),
        sa.UniqueConstraint(
            "map_id", "contact_id", name=op.f("uq_relationship_map_contacts_map_id_contact_id")
        ),
    )
    with op.batch_alter_table("relationship_map_contacts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_relationship_map_contacts_contact_id"), ["contact_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_relationship_map_contacts_map_id"), ["map_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_relationship_map_contacts_organization_id"),
            ["organization_id"],
            unique=False,
        )

    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_accounts_domain_trgm",
            ["domain"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"domain": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_accounts_name_trgm",
            ["name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("buying_groups", schema=None) as batch_op:
        batch_op.create_index(
            "ix_buying_groups_name_trgm",
            ["name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_contacts_email_trgm",
            ["email"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"email": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_contacts_first_name_trgm",
            ["first_name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"first_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.create_index(
            "ix_contacts_last_name_trgm",
            ["last_name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"last_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("opportunities", schema=None) as batch_op:
        batch_op.create_index(
            "ix_opportunities_name_trgm",
            ["name"],
            unique=False,
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    # ### end Alembic commands ###


def downgrade() -> None:
    # ### commands auto generated by Alembic - please adjust! ###
    with op.batch_alter_table("opportunities", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_opportunities_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_contacts_last_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"last_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_contacts_first_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"first_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_contacts_email_trgm",
            postgresql_using="gin",
            postgresql_ops={"email": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("buying_groups", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_buying_groups_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_accounts_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_accounts_domain_trgm",
            postgresql_using="gin",
            postgresql_ops={"domain": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    with op.batch_alter_table("relationship_map_contacts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_relationship_map_contacts_organization_id"))
        batch_op.drop_index(batch_op.f("ix_relationship_map_contacts_map_id"))
        batch_op.drop_index(batch_op.f("ix_relationship_map_contacts_contact_id"))

    op.drop_table("relationship_map_contacts")
    with op.batch_alter_table("relationship_maps", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_relationship_maps_organization_id"))
        batch_op.drop_index("ix_relationship_maps_org_created")
        batch_op.drop_index(batch_op.f("ix_relationship_maps_account_id"))

    op.drop_table("relationship_maps")
    with op.batch_alter_table("leads", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_leads_org_crm_id_live",
            postgresql_where=sa.text("crm_id IS NOT NULL AND archived_at IS NULL"),
            sqlite_where=sa.text("crm_id IS NOT NULL AND archived_at IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_leads_organization_id"))
        batch_op.drop_index("ix_leads_org_created")
        batch_op.drop_index(
            "ix_leads_last_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"last_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_leads_first_name_trgm",
            postgresql_using="gin",
            postgresql_ops={"first_name": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_leads_email_trgm",
            postgresql_using="gin",
            postgresql_ops={"email": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )
        batch_op.drop_index(
            "ix_leads_company_trgm",
            postgresql_using="gin",
            postgresql_ops={"company": "gin_trgm_ops"},
            sqlite_where=sa.text("0"),
        )

    op.drop_table("leads")
    # ### end Alembic commands ###
