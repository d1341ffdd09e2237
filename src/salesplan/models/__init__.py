"""Every table, imported here so that `Base.metadata` is complete for Alembic and tests."""

from salesplan.models.base import Base
from salesplan.models.crm import Account, BuyingGroup, BuyingGroupMember, Contact, Opportunity
from salesplan.models.identity import ApiKey, Membership, Organization, User
from salesplan.models.oauth import OAuthApp, OAuthCode, OAuthToken, WebSession
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask

__all__ = [
    "Account",
    "ApiKey",
    "Base",
    "BuyingGroup",
    "BuyingGroupMember",
    "Contact",
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
    "User",
    "WebSession",
]
