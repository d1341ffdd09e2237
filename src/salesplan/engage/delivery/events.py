"""Events of Engage delivery (kit.events)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from salesplan.kit.events import DomainEvent


@dataclass(frozen=True)
class ReplyReceived(DomainEvent):
    reply_id: uuid.UUID
