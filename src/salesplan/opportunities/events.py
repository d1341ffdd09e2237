"""What the opportunities domain says happened (`kit.events`): the opportunity written,
rendered as the API answers it (`OpportunityOut`) only for a subscriber. Who follows them is
wired in `salesplan.events` (webhooks' `opportunity.*`, contract §13)."""

from __future__ import annotations

from salesplan.kit.events import RowEvent
from salesplan.opportunities.schemas import OpportunityOut


class _OpportunityEvent(RowEvent):
    schema = OpportunityOut


class OpportunityCreated(_OpportunityEvent):
    """An opportunity was created."""


class OpportunityUpdated(_OpportunityEvent):
    """An opportunity was replaced or patched."""


class OpportunityDeleted(_OpportunityEvent):
    """An opportunity was archived."""
