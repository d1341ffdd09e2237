"""What a buyer did in a plan's room (contract §16 "Activity and engagement"), said by the
code that writes it (`kit.events`). Who follows what is wired in `salesplan.events`: the
activity row (`activity.record`), the webhooks `plan_room.*` (contract §13) and the sellers'
digest (`notices.queue_digest`), all in the transaction of the action.

An event is the activity row it records: its id and time are chosen when it is emitted, so
that the row and the webhook's `data` say the same."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit import clock
from salesplan.kit.events import Resource, ResourceEvent
from salesplan.kit.ids import uuid7


@dataclass(frozen=True)
class RoomActivity(ResourceEvent):
    """One buyer action in a room: its share and contact, the task it concerns (if any)."""

    kind: ClassVar[str]

    organization_id: uuid.UUID
    plan_id: uuid.UUID
    share_id: uuid.UUID
    contact_id: uuid.UUID
    task_id: uuid.UUID | None = None
    id: uuid.UUID = field(default_factory=uuid7)
    at: datetime = field(default_factory=lambda: clock.utcnow())

    def row(self) -> dict[str, object]:
        """The `plan_activity` row."""
        return {
            "id": self.id,
            "organization_id": self.organization_id,
            "plan_id": self.plan_id,
            "type": self.kind,
            "share_id": self.share_id,
            "contact_id": self.contact_id,
            "task_id": self.task_id,
            "created_at": self.at,
        }

    def actor(self) -> Mapping[str, object] | None:
        return {"type": "contact", "id": str(self.contact_id)}

    async def resource(self, conn: AsyncConnection) -> Resource:
        """The activity item as `listPlanActivity` answers it."""
        return {
            "id": self.id,
            "type": self.kind,
            "shareId": self.share_id,
            "contactId": self.contact_id,
            "taskId": self.task_id,
            "createdAt": self.at,
        }


class RoomViewed(RoomActivity):
    """A signed-in buyer opened the room (at most one per share per 30 minutes)."""

    kind = "viewed"


class RoomTaskCompleted(RoomActivity):
    """A buyer ticked a task."""

    kind = "task_completed"


class RoomTaskReopened(RoomActivity):
    """A buyer unticked a task."""

    kind = "task_reopened"


class RoomCommented(RoomActivity):
    """A buyer commented on a task."""

    kind = "commented"


class RoomInvited(RoomActivity):
    """A buyer invited a colleague (`task_id` is None; the new share is in the share list)."""

    kind = "invited"


ACTIVITY_TYPES = tuple(
    k.kind for k in (RoomViewed, RoomTaskCompleted, RoomTaskReopened, RoomCommented, RoomInvited)
)
