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
from salesplan.models.engage import (
    EngageCampaign,
    EngageDraft,
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageList,
    EngageListMember,
    EngageSuppression,
    EngageTemplate,
)
from salesplan.models.engage_delivery import (
    EngageMessage,
    EngageReply,
    IdempotencyRecord,
    OrganizationIntegration,
    SenderPause,
)
from salesplan.models.feed import FeedMessage, FeedParticipant, FeedThread
from salesplan.models.identity import ApiKey, Membership, Organization, User
from salesplan.models.oauth import OAuthApp, OAuthCode, OAuthToken, WebSession
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.models.rooms import (
    PlanActivity,
    PlanRoom,
    PlanRoomNotice,
    PlanShare,
    PlanShareCode,
    PlanShareLink,
    PlanShareSession,
    PlanTaskComment,
    PlanTaskReminder,
)
from salesplan.models.webhooks import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)

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
    "EngageCampaign",
    "EngageDraft",
    "EngageEnrollment",
    "EngageEnrollmentJob",
    "EngageList",
    "EngageListMember",
    "EngageMessage",
    "EngageReply",
    "EngageSuppression",
    "EngageTemplate",
    "FeedMessage",
    "FeedParticipant",
    "FeedThread",
    "IdempotencyRecord",
    "Lead",
    "Membership",
    "OAuthApp",
    "OAuthCode",
    "OAuthToken",
    "Opportunity",
    "Organization",
    "OrganizationIntegration",
    "Plan",
    "PlanActivity",
    "PlanGoal",
    "PlanMilestone",
    "PlanRoom",
    "PlanRoomNotice",
    "PlanShare",
    "PlanShareCode",
    "PlanShareLink",
    "PlanShareSession",
    "PlanTask",
    "PlanTaskComment",
    "PlanTaskReminder",
    "RelationshipMap",
    "RelationshipMapContact",
    "SenderPause",
    "User",
    "WebSession",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
]
