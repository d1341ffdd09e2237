"""Time in one place, so that every timestamp is aware UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def today() -> date:
    return utcnow().date()


def isoformat(value: datetime) -> str:
    """ISO 8601 with a `Z` offset, as the contract renders every date-time."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
