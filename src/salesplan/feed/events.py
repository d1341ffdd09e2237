"""What the feed says happened (`kit.events`): a message received into an account's feed (an
inbound e-mail's reply, a Slack message), rendered as the thread's messages answer it only
for a subscriber. Who follows it is wired in `salesplan.events` (webhooks'
`feed_message.received`, contract §13)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.errors import NotFound
from salesplan.feed import repository
from salesplan.feed.service import message_out
from salesplan.kit.events import Resource, ResourceEvent


@dataclass(frozen=True)
class FeedMessageReceived(ResourceEvent):
    organization_id: uuid.UUID
    message_id: uuid.UUID

    async def resource(self, conn: AsyncConnection) -> Resource:
        row = await repository.message_row(conn, self, self.message_id)
        if row is None:
            raise NotFound("Feed message not found.", details={"id": str(self.message_id)})
        return message_out(row)
