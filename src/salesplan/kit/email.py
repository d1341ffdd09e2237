"""The one e-mail check: something@domain.tld, no whitespace, no NUL, no second @, a top-level
label without a dot. Deliberately loose (delivery is the real test). The same pattern is the JSON
schema of `Email` (kit/fields.py), so a schema-valid address is never refused: it spells
whitespace out (`WHITESPACE`) because Python's `\\s` and ECMA-262's disagree."""

from __future__ import annotations

import re
from collections.abc import Callable
from email.utils import parseaddr
from typing import Any

from salesplan.kit.schemas import WHITESPACE

EMAIL_PATTERN = rf"^[^@{WHITESPACE}\x00]+@[^@{WHITESPACE}\x00]+\.[^@{WHITESPACE}.\x00]+$"
EMAIL = re.compile(EMAIL_PATTERN)


def is_email(value: str) -> bool:
    return EMAIL.match(value) is not None


def mailbox(value: str) -> str:
    """The address `value` names, as suppression compares it (contract §12): display name,
    angle brackets, quotes, comments and case removed, so that `Opt Out <optout@x.example>`,
    `"optout@x.example"` and `OPTOUT@X.EXAMPLE (comment)` are all `optout@x.example` — the
    address SMTP delivers to."""
    address = parseaddr(value)[1] or value
    return address.strip().strip('"').strip().lower()


def mailbox_or_none(value: str | None) -> str | None:
    """`mailbox(value)`, or None for no address (what a normalized column holds)."""
    return (mailbox(value) or None) if value else None


def mailbox_default(column: str) -> Callable[[Any], str | None]:
    """A column default (SQLAlchemy, context-sensitive) holding `mailbox` of the row's
    `column`: a normalized copy written with the row, by the ORM and by Core inserts alike,
    so that looking an address up is one indexed equality."""

    def default(context: Any) -> str | None:
        value = context.get_current_parameters().get(column)
        return mailbox_or_none(value) if isinstance(value, str) else None

    return default
