"""Every table, imported here so that `Base.metadata` is complete for Alembic and tests."""

from salesplan.models.base import Base
from salesplan.models.crm import (
    Account,
    BuyingGroup,
    BuyingGroupMember,
    Contact,
    Lead,
    Opportunity,
    RelationshipMap,
    RelationshipMapContact,
)
from salesplan.models.identity import ApiKey, Membership, Organization, User

__all__ = [
    "Account",
    "ApiKey",
    "Base",
    "BuyingGroup",
    "BuyingGroupMember",
    "Contact",
    "Lead",
    "Membership",
    "Opportunity",
    "Organization",
    "RelationshipMap",
    "RelationshipMapContact",
    "User",
]
