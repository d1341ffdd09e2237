"""The domain events engage's delivery emits (`kit.events`); who follows them is wired in
`salesplan.events`."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from salesplan.kit.events import DomainEvent


@dataclass(frozen=True)
class ReplyReceived(DomainEvent):
    """An inbound reply was stored (`EngageReply`): the feed records it in the account's
    thread, in the same transaction."""

    reply_id: uuid.UUID
