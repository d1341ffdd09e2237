"""The domain events engage's delivery emits (`kit.events`); who follows them is wired in
`salesplan.events` (the feed, and webhooks' `engage_message.*`, contract §13).

A message event renders the message as listEngageQueue answers it (`QueueItemOut`), with
`changed` (by Python name) as the fields stand after the change where the object written does
not show them (a Core UPDATE of the delivery worker)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.engage.delivery.schemas import QueueItemOut, SuppressionOut
from salesplan.kit.events import DomainEvent, Resource, ResourceEvent, RowEvent
from salesplan.models.engage_delivery import EngageMessage


@dataclass(frozen=True)
class ReplyReceived(DomainEvent):
    """An inbound reply was stored (`EngageReply`): the feed records it in the account's
    thread, in the same transaction."""

    reply_id: uuid.UUID


def queue_item(message: EngageMessage, changed: Mapping[str, object]) -> QueueItemOut:
    item = QueueItemOut.model_validate(message)
    return item.model_copy(update=dict(changed)) if changed else item


@dataclass(frozen=True)
class MessageEvent(ResourceEvent):
    organization_id: uuid.UUID
    message: EngageMessage
    changed: Mapping[str, object] = field(default_factory=dict)

    async def resource(self, conn: AsyncConnection) -> Resource:
        return queue_item(self.message, self.changed)


class MessageDelivered(MessageEvent):
    """A delivery report said the message arrived."""


class MessageBounced(MessageEvent):
    """A delivery report said the message bounced (hard)."""


class MessageReplied(MessageEvent):
    """A reply to the message was stored (not an auto-reply)."""


class MessageOpened(MessageEvent):
    """The message's tracking pixel was loaded."""


class MessageClicked(MessageEvent):
    """A tracked link of the message was followed."""


class MessageFailed(MessageEvent):
    """The delivery worker gave up on the message."""


@dataclass(frozen=True)
class MessageSent(ResourceEvent):
    """The provider accepted the message at `sent_at` (the delivery worker marked it `sent`);
    `sender` is the From it went out with. The feed records an e-mail's copy."""

    organization_id: uuid.UUID
    message: EngageMessage
    sent_at: datetime
    sender: str

    async def resource(self, conn: AsyncConnection) -> Resource:
        at = self.sent_at
        return queue_item(self.message, {"status": "sent", "sent_at": at, "updated_at": at})


def message_changed(message: EngageMessage, now: datetime) -> MessageEvent | None:
    """The event of what an inbound report or reply just did to a message: the stamp that is
    `now` says which (a repeated report changes no stamp and says nothing)."""
    for stamp, kind in (
        ("bounced_at", MessageBounced),
        ("delivered_at", MessageDelivered),
        ("replied_at", MessageReplied),
    ):
        if getattr(message, stamp, None) == now:
            return kind(message.organization_id, message)
    return None


class _SuppressionEvent(RowEvent):
    schema = SuppressionOut


class SuppressionCreated(_SuppressionEvent):
    """An address was put on the suppression list (`inbound.suppress`, every path's one
    function: unsubscribe, hard bounce, complaint, a manual addition)."""


class SuppressionDeleted(_SuppressionEvent):
    """An address was taken off the suppression list (the row as it was, rendered when it
    was deleted)."""
