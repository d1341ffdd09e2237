"""CRM records: accounts, buying groups, contacts, opportunities, leads, relationship maps."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    DDL,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    event,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, validates

from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox_default, mailbox_or_none
from salesplan.models.base import (
    ArchiveMixin,
    Base,
    IdMixin,
    TenantMixin,
    TimestampMixin,
    sort_indexes,
)


def crm_id_unique(table: str) -> Index:
    """`crmId` is unique per organization among live rows: a partial unique index, so that two
    concurrent creates give exactly one winner."""
    where = text("crm_id IS NOT NULL AND archived_at IS NULL")
    return Index(
        f"uq_{table}_org_crm_id_live",
        "organization_id",
        "crm_id",
        unique=True,
        postgresql_where=where,
        sqlite_where=where,
    )


def trigram_index(table: str, column: str) -> Index:
    """`search` is a case-insensitive substring match (ILIKE '%term%'), which only a trigram GIN
    index serves on PostgreSQL. SQLite cannot use an index for it, so there the index is an
    empty partial index (`WHERE 0`): the same schema on both engines, costing nothing."""
    return Index(
        f"ix_{table}_{column}_trgm",
        column,
        postgresql_using="gin",
        postgresql_ops={column: "gin_trgm_ops"},
        sqlite_where=text("0"),
    )


class Account(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "accounts"
    __display_name__ = "Account"
    __table_args__ = (
        crm_id_unique("accounts"),
        Index("ix_accounts_org_created", "organization_id", "created_at", "id"),
        # updatedSince and sortBy=updatedAt, archived rows included (incremental sync)
        Index("ix_accounts_org_updated", "organization_id", "updated_at", "id"),
        *sort_indexes("accounts", "name", live=True),
        trigram_index("accounts", "name"),
        trigram_index("accounts", "domain"),
    )

    name: Mapped[str] = mapped_column(String(255))
    domain: Mapped[str | None] = mapped_column(String(255), default=None)
    website: Mapped[str | None] = mapped_column(String(2048), default=None)
    industry: Mapped[str | None] = mapped_column(String(255), default=None)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    crm_id: Mapped[str | None] = mapped_column(String(255), default=None)
    owner_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    annual_revenue: Mapped[Decimal | None] = mapped_column(Numeric(20, 2), default=None)
    employee_count: Mapped[int | None] = mapped_column(Integer, default=None)


class Contact(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "contacts"
    __display_name__ = "Contact"
    __table_args__ = (
        crm_id_unique("contacts"),
        Index("ix_contacts_org_created", "organization_id", "created_at", "id"),
        # updatedSince and sortBy=updatedAt, archived rows included (incremental sync)
        Index("ix_contacts_org_updated", "organization_id", "updated_at", "id"),
        *sort_indexes("contacts", "last_name", "email", live=True),
        trigram_index("contacts", "first_name"),
        trigram_index("contacts", "last_name"),
        trigram_index("contacts", "email"),
        # Who an address is (replies, suppressions): one indexed equality on the parsed address.
        Index("ix_contacts_org_email_mailbox", "organization_id", "email_mailbox"),
    )

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    first_name: Mapped[str | None] = mapped_column(String(255), default=None)
    last_name: Mapped[str | None] = mapped_column(String(255), default=None)
    email: Mapped[str | None] = mapped_column(String(320), default=None)
    title: Mapped[str | None] = mapped_column(String(255), default=None)
    phone: Mapped[str | None] = mapped_column(String(64), default=None)
    linkedin_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    crm_id: Mapped[str | None] = mapped_column(String(255), default=None)
    # IANA zone (validated on write): where a campaign's send window is read (contract §14).
    time_zone: Mapped[str | None] = mapped_column(String(64), default=None)
    # kit.email.mailbox of `email`, written with it (contract §12: suppression compares the
    # parsed address).
    email_mailbox: Mapped[str | None] = mapped_column(String(320), default=mailbox_default("email"))

    @validates("email")
    def _email_changed(self, key: str, value: str | None) -> str | None:
        self.email_mailbox = mailbox_or_none(value)
        return value

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p)


class Opportunity(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "opportunities"
    __display_name__ = "Opportunity"
    __table_args__ = (
        crm_id_unique("opportunities"),
        Index("ix_opportunities_org_created", "organization_id", "created_at", "id"),
        # updatedSince and sortBy=updatedAt, archived rows included (incremental sync)
        Index("ix_opportunities_org_updated", "organization_id", "updated_at", "id"),
        *sort_indexes("opportunities", "name", "close_date", live=True),
        trigram_index("opportunities", "name"),
    )

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    stage: Mapped[str | None] = mapped_column(String(100), default=None)
    amount: Mapped[Decimal | None] = mapped_column(Numeric(20, 2), default=None)
    currency: Mapped[str | None] = mapped_column(String(3), default=None)
    close_date: Mapped[date | None] = mapped_column(Date, default=None)
    probability: Mapped[int | None] = mapped_column(Integer, default=None)
    status: Mapped[str] = mapped_column(String(20), default="open")
    owner_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    crm_id: Mapped[str | None] = mapped_column(String(255), default=None)


class BuyingGroup(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "buying_groups"
    __display_name__ = "Buying group"
    __table_args__ = (
        # One default buying group per account.
        Index(
            "uq_buying_groups_account_default",
            "account_id",
            unique=True,
            postgresql_where=text("is_default"),
            sqlite_where=text("is_default = 1"),
        ),
        trigram_index("buying_groups", "name"),
        *sort_indexes("buying_groups", "created_at", "updated_at", "name", live=True),
    )

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    opportunity_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("opportunities.id", ondelete="SET NULL"), default=None
    )


class BuyingGroupMember(TenantMixin, Base):
    __tablename__ = "buying_group_members"
    __table_args__ = (UniqueConstraint("buying_group_id", "contact_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    buying_group_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("buying_groups.id", ondelete="CASCADE"), index=True
    )
    contact_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), index=True
    )


LEAD_STATUSES = ("new", "working", "qualified", "disqualified", "converted")


class Lead(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "leads"
    __display_name__ = "Lead"
    __table_args__ = (
        crm_id_unique("leads"),
        Index("ix_leads_org_created", "organization_id", "created_at", "id"),
        # updatedSince and sortBy=updatedAt, archived rows included (incremental sync)
        Index("ix_leads_org_updated", "organization_id", "updated_at", "id"),
        *sort_indexes("leads", "last_name", "email", live=True),
        trigram_index("leads", "first_name"),
        trigram_index("leads", "last_name"),
        trigram_index("leads", "email"),
        trigram_index("leads", "company"),
    )

    first_name: Mapped[str | None] = mapped_column(String(255), default=None)
    last_name: Mapped[str | None] = mapped_column(String(255), default=None)
    email: Mapped[str | None] = mapped_column(String(320), default=None)
    company: Mapped[str | None] = mapped_column(String(255), default=None)
    title: Mapped[str | None] = mapped_column(String(255), default=None)
    status: Mapped[str] = mapped_column(String(20), default="new")
    source: Mapped[str | None] = mapped_column(String(255), default=None)
    crm_id: Mapped[str | None] = mapped_column(String(255), default=None)

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p)


MAP_ENTITY_TYPES = ("Account", "BuyingGroup", "Opportunity")


def empty_map() -> dict[str, Any]:
    return {"nodes": [], "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}


class RelationshipMap(IdMixin, TenantMixin, TimestampMixin, Base):
    """A buyer map: one per entity (account, buying group or opportunity)."""

    __tablename__ = "relationship_maps"
    __display_name__ = "Relationship map"
    __table_args__ = (
        UniqueConstraint("organization_id", "entity_type", "entity_id"),
        Index("ix_relationship_maps_org_created", "organization_id", "created_at", "id"),
        *sort_indexes("relationship_maps", "updated_at"),
    )

    entity_type: Mapped[str] = mapped_column(String(20))
    entity_id: Mapped[uuid.UUID] = mapped_column()
    # The account the entity belongs to: placed contacts must be of this account.
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    map: Mapped[dict[str, Any]] = mapped_column(default=empty_map)
    orientation: Mapped[str] = mapped_column(String(20), default="vertical")
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    updated_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )


class RelationshipMapContact(TenantMixin, Base):
    """A contact placed on a map with its attributes (free strings; null until set)."""

    __tablename__ = "relationship_map_contacts"
    __table_args__ = (UniqueConstraint("map_id", "contact_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    map_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("relationship_maps.id", ondelete="CASCADE"), index=True
    )
    contact_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), index=True
    )
    support_status: Mapped[str | None] = mapped_column(String(100), default=None)
    decision_status: Mapped[str | None] = mapped_column(String(100), default=None)
    contact_status: Mapped[str | None] = mapped_column(String(100), default=None)
    functional_role: Mapped[str | None] = mapped_column(String(100), default=None)
    executive_id: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# The trigram indexes need the extension; `create_all` (tests) gets it here, migrations create it
# themselves.
event.listen(
    Base.metadata,
    "before_create",
    DDL("CREATE EXTENSION IF NOT EXISTS pg_trgm").execute_if(dialect="postgresql"),
)


def default_buying_group_name(account_name: str) -> str:
    return f"{account_name} Default Plan"
