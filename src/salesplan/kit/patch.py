"""PATCH bodies: what was sent, and the properties that may be left out but not sent as null."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic.alias_generators import to_camel

from salesplan.errors import ValidationFailed


def reject_nulls(sent: dict[str, Any], fields: Iterable[str]) -> None:
    """PATCH: a property that cannot be null may be left out, not sent as null (400 naming
    the property by its camelCase name)."""
    for name in fields:
        if name in sent and sent[name] is None:
            raise ValidationFailed.at(["body", to_camel(name)], "This property cannot be null.")
