"""What the contacts domain says happened (`kit.events`): the contact written, rendered as the API
answers it (`ContactOut`) only for a subscriber. Who follows them is wired in `salesplan.events`
(webhooks' `contact.*`, contract §13)."""

from __future__ import annotations

from salesplan.contacts.schemas import ContactOut
from salesplan.kit.events import RowEvent


class _ContactEvent(RowEvent):
    schema = ContactOut


class ContactCreated(_ContactEvent):
    """A contact was created (`row`: the Contact, or its rendered dict from a
    bulk create)."""


class ContactUpdated(_ContactEvent):
    """A contact was replaced or patched."""


class ContactDeleted(_ContactEvent):
    """A contact was archived."""
