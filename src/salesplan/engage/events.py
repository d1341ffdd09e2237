"""What Engage's campaigns say happened (`kit.events`): the campaign as the API answers it
(`CampaignOut`), rendered only for a subscriber. Who follows them is wired in
`salesplan.events` (webhooks' `engage_campaign.*`, contract §13). The messages' events are
`engage/delivery/events.py`'s."""

from __future__ import annotations

from salesplan.engage.schemas import CampaignOut
from salesplan.kit.events import RowEvent


class _CampaignEvent(RowEvent):
    schema = CampaignOut


class CampaignStarted(_CampaignEvent):
    """A campaign was started (`startEngageCampaign`)."""


class CampaignCompleted(_CampaignEvent):
    """A campaign was completed."""
