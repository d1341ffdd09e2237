"""Python values on the wire: query strings and JSON bodies. Decimals as exact strings,
dates and aware date-times in ISO 8601, models in their camelCase wire form, `NOT_GIVEN` left
out."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from pydantic import BaseModel

from salesplan_client._models import NotGiven


def _instant(value: datetime) -> str:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"{value!r} has no time zone: the API takes instants with their offset "
            "(datetime(..., tzinfo=UTC))."
        )
    return value.isoformat()


def _decimal(value: Decimal) -> str:
    if not value.is_finite():
        raise ValueError(f"{value!r} is not a finite number.")
    return format(value, "f")


def query_value(value: Any) -> str:
    """One query parameter's text: a list is comma-separated (`include=milestones,tasks`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return _instant(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(query_value(item) for item in value)
    return str(value)


def query_params(query: Mapping[str, Any]) -> dict[str, str]:
    return {name: query_value(value) for name, value in query.items() if value is not None}


def jsonable(value: Any) -> Any:
    """`value` as JSON types: models by their aliases (only the fields set), decimals as exact
    strings (the API takes money as a string or a number), instants with their offset."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, Mapping):
        return {
            str(key): jsonable(item)
            for key, item in value.items()
            if not isinstance(item, NotGiven)
        }
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime):
        return _instant(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Enum):
        return jsonable(value.value)
    raise TypeError(f"{type(value).__name__} cannot be sent as JSON: {value!r}")


def json_body(body: Mapping[str, Any]) -> bytes:
    return json.dumps(jsonable(body), ensure_ascii=False, separators=(",", ":")).encode()


def form_body(body: Mapping[str, Any]) -> dict[str, str]:
    return {
        name: query_value(value)
        for name, value in body.items()
        if value is not None and not isinstance(value, NotGiven)
    }
