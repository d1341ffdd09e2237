"""What the accounts domain says happened (`kit.events`): the account written, rendered as the API
answers it (`AccountOut`) only for a subscriber. Who follows them is wired in `salesplan.events`
(webhooks' `account.*`, contract §13)."""

from __future__ import annotations

from salesplan.accounts.schemas import AccountOut
from salesplan.kit.events import RowEvent


class _AccountEvent(RowEvent):
    schema = AccountOut


class AccountCreated(_AccountEvent):
    """A account was created (`row`: the Account, or its rendered dict from a
    bulk create)."""


class AccountUpdated(_AccountEvent):
    """A account was replaced or patched."""


class AccountDeleted(_AccountEvent):
    """A account was archived."""
