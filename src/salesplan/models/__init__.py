"""Every table, imported here so that `Base.metadata` is complete for Alembic and tests."""

from salesplan.models.base import Base
from salesplan.models.identity import ApiKey, Membership, Organization, User

__all__ = ["ApiKey", "Base", "Membership", "Organization", "User"]
