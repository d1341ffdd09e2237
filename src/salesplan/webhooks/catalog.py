"""Every webhook event type, in one place (contract §13): its `type`, a one-line description,
the model of its `data`, and the domain event (`kit.events.ResourceEvent`) it reports.

Adding a type is one `EventType(...)` entry below: the recorder follows the domain event
(`salesplan.events` wires every entry), `GET /webhooks/event-types` lists it, the OpenAPI
document's `webhooks` section carries it, and endpoints may subscribe to it (`eventTypes`).
A domain never imports this module; this module imports the domains' events and schemas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaValue

from salesplan.accounts import events as accounts
from salesplan.accounts.schemas import AccountOut
from salesplan.calendar import events as calendar
from salesplan.calendar.schemas import EventOut
from salesplan.contacts import events as contacts
from salesplan.contacts.schemas import ContactOut
from salesplan.engage import events as engage
from salesplan.engage.delivery import events as delivery
from salesplan.engage.delivery.schemas import QueueItemOut, SuppressionOut
from salesplan.engage.schemas import CampaignOut
from salesplan.feed import events as feed
from salesplan.feed.schemas import FeedMessageOut
from salesplan.kit.events import ResourceEvent
from salesplan.opportunities import events as opportunities
from salesplan.opportunities.schemas import OpportunityOut
from salesplan.plans import events as plans
from salesplan.plans.schemas import PlanGoalOut, PlanMilestoneOut, PlanOut, PlanTaskOut
from salesplan.rooms import events as rooms
from salesplan.rooms.schemas import ActivityOut
from salesplan.webhooks.schemas import WebhookTestData

# What a thin payload's `data` keeps of the resource (contract §13: `{id, updatedAt}`).
THIN = ("id", "updatedAt")


@dataclass(frozen=True)
class EventType:
    name: str  # the event's `type`
    description: str
    data: type[BaseModel]
    # The domain event reported as this type (None: sent by the webhooks themselves).
    event: type[ResourceEvent] | None
    # What a thin payload keeps (a resource without `id`/`updatedAt` names its own).
    thin: tuple[str, ...] = THIN

    @property
    def resource(self) -> str:
        return self.name.split(".", 1)[0]


E = EventType
CATALOG: tuple[EventType, ...] = (
    E("account.created", "An account was created.", AccountOut, accounts.AccountCreated),
    E("account.updated", "An account was changed.", AccountOut, accounts.AccountUpdated),
    E("account.deleted", "An account was archived.", AccountOut, accounts.AccountDeleted),
    E("contact.created", "A contact was created.", ContactOut, contacts.ContactCreated),
    E("contact.updated", "A contact was changed.", ContactOut, contacts.ContactUpdated),
    E("contact.deleted", "A contact was archived.", ContactOut, contacts.ContactDeleted),
    E(
        "opportunity.created",
        "An opportunity was created.",
        OpportunityOut,
        opportunities.OpportunityCreated,
    ),
    E(
        "opportunity.updated",
        "An opportunity was changed.",
        OpportunityOut,
        opportunities.OpportunityUpdated,
    ),
    E(
        "opportunity.deleted",
        "An opportunity was archived.",
        OpportunityOut,
        opportunities.OpportunityDeleted,
    ),
    E("plan.created", "A plan was created.", PlanOut, plans.PlanCreated),
    E(
        "plan.updated",
        "A plan or one of its milestones, goals or tasks was changed.",
        PlanOut,
        plans.PlanUpdated,
    ),
    E("plan.deleted", "A plan was archived.", PlanOut, plans.PlanDeleted),
    E(
        "plan_milestone.created",
        "A milestone was added to a plan.",
        PlanMilestoneOut,
        plans.MilestoneCreated,
    ),
    E(
        "plan_milestone.updated",
        "A plan's milestone was changed, reordered or restored.",
        PlanMilestoneOut,
        plans.MilestoneUpdated,
    ),
    E(
        "plan_milestone.deleted",
        "A plan's milestone was archived.",
        PlanMilestoneOut,
        plans.MilestoneDeleted,
    ),
    E("plan_goal.created", "A goal was added to a plan.", PlanGoalOut, plans.GoalCreated),
    E(
        "plan_goal.updated",
        "A plan's goal was changed or restored.",
        PlanGoalOut,
        plans.GoalUpdated,
    ),
    E(
        "plan_goal.deleted",
        "A plan's goal was archived (its sub-goals with it, one event each).",
        PlanGoalOut,
        plans.GoalDeleted,
    ),
    E("plan_task.created", "A task was added to a plan.", PlanTaskOut, plans.TaskCreated),
    E(
        "plan_task.updated",
        "A plan's task was changed (and not completed by the change).",
        PlanTaskOut,
        plans.TaskUpdated,
    ),
    E(
        "plan_task.completed",
        "A plan's task was completed.",
        PlanTaskOut,
        plans.TaskCompleted,
    ),
    E("plan_task.deleted", "A plan's task was archived.", PlanTaskOut, plans.TaskDeleted),
    E(
        "engage_message.sent",
        "The provider accepted an Engage message.",
        QueueItemOut,
        delivery.MessageSent,
    ),
    E(
        "engage_message.delivered",
        "A delivery report said an Engage message arrived.",
        QueueItemOut,
        delivery.MessageDelivered,
    ),
    E(
        "engage_message.bounced",
        "A delivery report said an Engage message bounced.",
        QueueItemOut,
        delivery.MessageBounced,
    ),
    E(
        "engage_message.opened",
        "An Engage message's tracking pixel was loaded.",
        QueueItemOut,
        delivery.MessageOpened,
    ),
    E(
        "engage_message.clicked",
        "A tracked link of an Engage message was followed.",
        QueueItemOut,
        delivery.MessageClicked,
    ),
    E(
        "engage_message.replied",
        "A reply to an Engage message was received (not an auto-reply).",
        QueueItemOut,
        delivery.MessageReplied,
    ),
    E(
        "engage_message.failed",
        "Delivery of an Engage message was given up.",
        QueueItemOut,
        delivery.MessageFailed,
    ),
    E(
        "engage_campaign.started",
        "An Engage campaign was started.",
        CampaignOut,
        engage.CampaignStarted,
    ),
    E(
        "engage_campaign.completed",
        "An Engage campaign completed: by PATCH, or when its last enrollment finished.",
        CampaignOut,
        engage.CampaignCompleted,
    ),
    E(
        "engage_suppression.created",
        "An address was put on the suppression list (unsubscribe, bounce, complaint, manual).",
        SuppressionOut,
        delivery.SuppressionCreated,
        thin=("address", "createdAt"),
    ),
    E(
        "engage_suppression.deleted",
        "An address was taken off the suppression list.",
        SuppressionOut,
        delivery.SuppressionDeleted,
        thin=("address", "createdAt"),
    ),
    E(
        "calendar_event.created",
        "A calendar event was stored (created or synced).",
        EventOut,
        calendar.CalendarEventCreated,
    ),
    E(
        "calendar_event.updated",
        "A stored calendar event changed.",
        EventOut,
        calendar.CalendarEventUpdated,
    ),
    E(
        "calendar_event.deleted",
        "A calendar event was removed.",
        EventOut,
        calendar.CalendarEventDeleted,
    ),
    E(
        "feed_message.received",
        "A message (e-mail reply, Slack message) was received into an account's feed.",
        FeedMessageOut,
        feed.FeedMessageReceived,
    ),
    # A buyer in a plan's room (contract §16): `data` is the activity item as listPlanActivity
    # answers it, `actor` the contact beside it.
    E(
        "plan_room.viewed",
        "A signed-in buyer opened a plan's room (at most one per share per 30 minutes).",
        ActivityOut,
        rooms.RoomViewed,
        thin=("id", "createdAt"),
    ),
    E(
        "plan_room.commented",
        "A buyer commented on a task in a plan's room.",
        ActivityOut,
        rooms.RoomCommented,
        thin=("id", "createdAt"),
    ),
    E(
        "plan_room.invited",
        "A buyer invited a colleague to a plan's room.",
        ActivityOut,
        rooms.RoomInvited,
        thin=("id", "createdAt"),
    ),
    E(
        "webhook.test",
        "A test event, sent by POST /webhooks/endpoints/{endpointId}/test whatever the "
        "endpoint's eventTypes.",
        WebhookTestData,
        None,
        thin=("endpointId", "createdAt"),
    ),
)

BY_TYPE: dict[str, EventType] = {e.name: e for e in CATALOG}
EVENT_TYPES: tuple[str, ...] = tuple(BY_TYPE)
RESOURCES: tuple[str, ...] = tuple(dict.fromkeys(e.resource for e in CATALOG))
# What an endpoint may subscribe to: a type, or `resource.*` for every type of a resource.
SUBSCRIBABLE: tuple[str, ...] = EVENT_TYPES + tuple(f"{r}.*" for r in RESOURCES)
TEST_TYPE = "webhook.test"
ATTEMPTS_PATH = "/api/v1/webhooks/endpoints/{endpointId}/attempts"


def thin_keys(type_: str) -> tuple[str, ...]:
    found = BY_TYPE.get(type_)
    return found.thin if found is not None else THIN


# -- the OpenAPI document ---------------------------------------------------------------------

_HEADERS = (
    ("webhook-id", "The event's id: the same on every retry of it (drop one you handled)."),
    ("webhook-timestamp", "Unix seconds of this attempt."),
    (
        "webhook-signature",
        'v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"> with the endpoint\'s secret; '
        "two, space-separated, while a rotated secret is live.",
    ),
)


def component_name(model: type[BaseModel], schemas: dict[str, JsonSchemaValue]) -> str:
    """The model's name among the document's components (FastAPI qualifies a name that two
    models share with their module path); added from the model when it is not there yet."""
    qualified = f"{model.__module__.replace('.', '__')}__{model.__name__}"
    if qualified in schemas:
        return qualified
    if model.__name__ not in schemas:
        schema = TypeAdapter(model).json_schema(
            mode="serialization", ref_template="#/components/schemas/{model}"
        )
        for name, definition in {**schema.pop("$defs", {}), model.__name__: schema}.items():
            schemas.setdefault(name, definition)
    return model.__name__


def openapi_webhooks(document: dict[str, Any]) -> None:
    """The OpenAPI 3.1 `webhooks` section (one entry per type: the body, with its `data`
    schema, and the Standard Webhooks headers) and `eventTypes` as an enum of the types and
    `resource.*`. Run before the components get their published names, so that every `$ref`
    follows them."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    section: dict[str, Any] = {}
    for entry in CATALOG:
        ref = f"#/components/schemas/{component_name(entry.data, schemas)}"
        section[entry.name] = {
            "post": {
                "summary": entry.description,
                "description": f"{entry.description} `data` is the resource as the API "
                'answers it; with an endpoint\'s `"payload": "thin"`, only '
                f"{', '.join(f'`{k}`' for k in entry.thin)}.",
                "tags": ["webhooks"],
                "parameters": [
                    {
                        "name": name,
                        "in": "header",
                        "required": True,
                        "description": text,
                        "schema": {"type": "string"},
                    }
                    for name, text in _HEADERS
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["type", "timestamp", "data"],
                                "properties": {
                                    "type": {"type": "string", "const": entry.name},
                                    "timestamp": {"type": "string", "format": "date-time"},
                                    "actor": {
                                        "type": "object",
                                        "description": "Who did it, when a buyer did "
                                        '(`{"type": "contact", "id"}`); absent otherwise.',
                                        "required": ["type", "id"],
                                        "properties": {
                                            "type": {"type": "string", "const": "contact"},
                                            "id": {"type": "string", "format": "uuid"},
                                        },
                                    },
                                    "data": {"$ref": ref},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "2XX": {"description": "Delivered."},
                    "410": {"description": "Gone: the endpoint is disabled at once."},
                },
            }
        }
    document["webhooks"] = section
    enum = list(SUBSCRIBABLE)
    attempts = document.get("paths", {}).get(ATTEMPTS_PATH, {}).get("get", {})
    for parameter in attempts.get("parameters", []):
        if parameter.get("name") == "eventType":  # the attempts list's filter: one of them
            for node in [
                parameter.get("schema", {}),
                *parameter.get("schema", {}).get("anyOf", []),
            ]:
                if node.get("type") == "string":
                    node.pop("maxLength", None)
                    node["enum"] = enum
    for name in ("EndpointIn", "EndpointPatch", "EndpointOut", "EndpointWithSecret"):
        for key in (name, f"{name}-Input", f"{name}-Output"):
            _enum_event_types(schemas.get(key), enum)


def _enum_event_types(schema: object, enum: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    prop = schema.get("properties", {}).get("eventTypes")
    if not isinstance(prop, dict):
        return
    for node in [prop, *prop.get("anyOf", [])]:
        items = node.get("items") if isinstance(node, dict) else None
        if isinstance(items, dict):
            items.pop("maxLength", None)
            items.pop("minLength", None)
            items.pop("pattern", None)
            items["enum"] = enum
