"""Every table, imported here so that `Base.metadata` is complete for Alembic and tests."""

from salesplan.models.base import Base
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
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
from salesplan.models.oauth import OAuthApp, OAuthCode, OAuthToken, WebSession
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask

__all__ = [
    "Account",
    "ApiKey",
    "Base",
    "BuyingGroup",
    "BuyingGroupMember",
    "CalendarActionItem",
    "CalendarArtifact",
    "CalendarConnection",
    "CalendarEvent",
    "Contact",
    "Lead",
    "Membership",
    "OAuthApp",
    "OAuthCode",
    "OAuthToken",
    "Opportunity",
    "Organization",
    "Plan",
    "PlanGoal",
    "PlanMilestone",
    "PlanTask",
    "RelationshipMap",
    "RelationshipMapContact",
    "User",
    "WebSession",
]
