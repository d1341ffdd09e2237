"""IANA time zones by name (contract §14: contacts' `timeZone`, campaigns' send windows): a
name zoneinfo does not know is the caller's 422, never a 500."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from salesplan.errors import Unprocessable


@lru_cache(maxsize=1024)
def zone(name: str) -> ZoneInfo | None:
    """The IANA zone called `name`, or None when there is none (or the name is no zone name:
    a path, an empty string)."""
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name or "\x00" in name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def check_zone(name: str | None, field: str) -> None:
    """422 `unprocessable` naming `field` when `name` is given and is no IANA zone."""
    if name is not None and zone(name) is None:
        raise Unprocessable(
            f"{name!r} is not an IANA time zone name (e.g. Europe/Paris).",
            details={"field": field, "reason": "unknown_time_zone"},
        )
