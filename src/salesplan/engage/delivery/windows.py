"""Send windows (contract §14): a campaign's steps go out only on the window's days, between its
start and end, in the contact's time zone (`timeZone: "contact"`, else the window's
`fallbackTimeZone`, default UTC) or in a fixed IANA zone. A step due outside the window waits
for the next opening; the later steps count their delays from when it was actually sent
(`campaigns.schedule` bases them on the enrollment's `last_sent_at`).

Days name the day a window opens: a window whose end is before its start crosses midnight
(`"22:00"` to `"06:00"` on FRI runs Friday 22:00 to Saturday 06:00). Wall times are read in the
zone on the day in question, so a window follows daylight saving time (see `_wall` for the
hour that is skipped or repeated).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from salesplan.kit.zones import zone

DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
CONTACT = "contact"


def _clock(value: str) -> time:
    hours, minutes = value.split(":")
    return time(int(hours), int(minutes))


def _wall(day: date, at: time, tz: ZoneInfo) -> datetime:
    """The UTC instant of the wall time `at` on `day` in `tz`: of two (a fall-back fold) the
    first; one the clock skips (a spring-forward gap) moves forward by the gap (02:30 on the
    day clocks go from 02:00 to 03:00 is 03:30), as calendars do."""
    return datetime.combine(day, at, tzinfo=tz).astimezone(UTC)


def window_zone(window: dict[str, Any], contact_zone: str | None) -> ZoneInfo:
    """The zone the window is read in for a contact."""
    name = str(window.get("timeZone") or "UTC")
    if name == CONTACT:
        picked = zone(contact_zone or "") or zone(str(window.get("fallbackTimeZone") or "UTC"))
        return picked or ZoneInfo("UTC")
    return zone(name) or ZoneInfo("UTC")


def next_opening(
    window: dict[str, Any] | None, due: datetime, contact_zone: str | None
) -> datetime:
    """`due` when it falls inside the window, else the window's next opening after it (UTC)."""
    if not window:
        return due
    days = {DAYS.index(d) for d in window.get("days") or DAYS if d in DAYS}
    if not days:
        return due
    tz = window_zone(window, contact_zone)
    start, end = _clock(str(window["start"])), _clock(str(window["end"]))
    due = due.astimezone(UTC)
    today = due.astimezone(tz).date()
    # Yesterday's window may still be open (one crossing midnight); a week ahead always holds
    # the next opening of a window with at least one day.
    for offset in range(-1, 9):
        day = today + timedelta(days=offset)
        if day.weekday() not in days:
            continue
        opens = _wall(day, start, tz)
        closes = _wall(day + timedelta(days=1) if end <= start else day, end, tz)
        if due < opens:
            return opens
        if due < closes:
            return due
    return due  # unreachable with a valid window
