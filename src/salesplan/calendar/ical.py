"""iCalendar (RFC 5545) in and out: the instances of a calendar object inside a window (recurring
events expanded), attendees parsed, and the edits an update writes back: to the event itself,
or, for one occurrence of a recurring event, to that occurrence's override (a VEVENT with the
same UID and a RECURRENCE-ID naming the occurrence's original start), as calendar apps do."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypedDict

import recurring_ical_events
from icalendar import Calendar, Component, Event, vCalAddress, vText


class Attendee(TypedDict):
    email: str
    name: str | None
    status: str


@dataclass
class Instance:
    uid: str
    recurrence_key: str  # "" for a single event; the original start of a recurring one
    title: str
    description: str | None
    location: str | None
    start: datetime
    end: datetime
    all_day: bool
    attendees: list[Attendee] = field(default_factory=list)
    organizer_email: str | None = None


def _aware(value: date | datetime) -> tuple[datetime, bool]:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC), False
    return datetime.combine(value, time(0), tzinfo=UTC), True


def _email(address: object) -> str | None:
    text = str(address or "").strip()
    if text.lower().startswith("mailto:"):
        text = text[7:]
    return text.lower() or None


def _attendees(component: Component) -> list[Attendee]:
    raw = component.get("ATTENDEE")
    if raw is None:
        return []
    out: list[Attendee] = []
    for att in raw if isinstance(raw, list) else [raw]:
        email = _email(att)
        if not email:
            continue
        params = getattr(att, "params", {})
        out.append(
            {
                "email": email,
                "name": params.get("CN") or None,
                "status": (params.get("PARTSTAT") or "NEEDS-ACTION").lower(),
            }
        )
    return out


def _text(component: Component, name: str) -> str | None:
    value = component.get(name)
    return None if value is None else str(value)


def parse_instances(ics: str, start: datetime, end: datetime) -> list[Instance]:
    cal = Calendar.from_ical(ics)
    masters_recurring = {
        str(c.get("UID")) for c in cal.walk("VEVENT") if c.get("RRULE") or c.get("RDATE")
    }
    masters_recurring |= {str(c.get("UID")) for c in cal.walk("VEVENT") if c.get("RECURRENCE-ID")}
    out: list[Instance] = []
    for comp in recurring_ical_events.of(cal).between(start, end):
        uid = str(comp.get("UID", ""))
        begin, all_day = _aware(comp.decoded("DTSTART"))
        if comp.get("DTEND") is not None:
            finish, _ = _aware(comp.decoded("DTEND"))
        elif comp.get("DURATION") is not None:
            finish = begin + comp.decoded("DURATION")
        else:
            finish = begin + (timedelta(days=1) if all_day else timedelta(0))
        key = ""
        if uid in masters_recurring:
            rid = comp.get("RECURRENCE-ID")
            key = _aware(rid.dt)[0].isoformat() if rid is not None else begin.isoformat()
        organizer = comp.get("ORGANIZER")
        out.append(
            Instance(
                uid=uid,
                recurrence_key=key,
                title=str(comp.get("SUMMARY", "")),
                description=_text(comp, "DESCRIPTION"),
                location=_text(comp, "LOCATION"),
                start=begin,
                end=finish,
                all_day=all_day,
                attendees=_attendees(comp),
                organizer_email=_email(organizer) if organizer is not None else None,
            )
        )
    return out


class OccurrenceMissing(ValueError):
    """The object holds neither the series nor an override of the occurrence."""


def recurrence_key_of(component: Component) -> str:
    """The `recurrence_key` of an override (its RECURRENCE-ID as a UTC instant), as
    `parse_instances` gives it."""
    return _aware(component.decoded("RECURRENCE-ID"))[0].isoformat()


# What an override does not inherit from its series.
_SERIES_ONLY = (
    *("RRULE", "RDATE", "EXDATE", "EXRULE", "RECURRENCE-ID"),
    *("DTSTART", "DTEND", "DURATION", "DTSTAMP", "SEQUENCE"),
)


def _override(master: Component, recurrence_key: str, start: datetime, end: datetime) -> Component:
    """A new override of the occurrence `recurrence_key` of `master`: the series' properties,
    its RECURRENCE-ID in the value type (and zone) of the series' DTSTART, RFC 5545 §3.8.4.4."""
    override = Event.from_ical(master.to_ical())
    for name in _SERIES_ONLY:
        override.pop(name, None)
    original = datetime.fromisoformat(recurrence_key)
    first = master.decoded("DTSTART")
    if not isinstance(first, datetime):  # an all-day series
        override.add("RECURRENCE-ID", original.date())
        override.add("DTSTART", start.date())
        override.add("DTEND", max(end.date(), start.date() + timedelta(days=1)))
    else:
        if first.tzinfo is None:  # floating: parse_instances read it as UTC
            rid = original.astimezone(UTC).replace(tzinfo=None)
        else:
            rid = original.astimezone(first.tzinfo)
        override.add("RECURRENCE-ID", rid)
        override.add("DTSTART", start.astimezone(UTC))
        override.add("DTEND", end.astimezone(UTC))
    override.add("SEQUENCE", int(master.get("SEQUENCE", 0)))
    return override


def _targets(
    cal: Calendar, uid: str, recurrence_key: str, start: datetime | None, end: datetime | None
) -> list[Component]:
    """The VEVENTs an update of (uid, recurrence_key) edits, an override added when needed."""
    mine = [c for c in cal.walk("VEVENT") if str(c.get("UID")) == uid]
    if not recurrence_key:
        return mine
    for comp in mine:
        if comp.get("RECURRENCE-ID") is not None and recurrence_key_of(comp) == recurrence_key:
            return [comp]
    master = next((c for c in mine if c.get("RECURRENCE-ID") is None), None)
    if master is None or start is None or end is None:
        raise OccurrenceMissing("the occurrence is no longer in the event's series")
    override = _override(master, recurrence_key, start, end)
    cal.add_component(override)
    return [override]


def apply_changes(
    ics: str,
    uid: str,
    changes: dict[str, Any],
    *,
    recurrence_key: str = "",
    start: datetime | None = None,
    end: datetime | None = None,
) -> str:
    """The object with the event `uid` edited: keys title, description, location, start, end,
    attendees ([{email, name}]). With a `recurrence_key`, only that occurrence, through its
    override (created from the series with the occurrence's current `start` and `end` when
    there is none yet); the series itself is left as it is."""
    cal = Calendar.from_ical(ics)
    for comp in _targets(cal, uid, recurrence_key, start, end):
        for key, prop in (
            ("title", "SUMMARY"),
            ("description", "DESCRIPTION"),
            ("location", "LOCATION"),
        ):
            if key in changes:
                comp.pop(prop, None)
                if changes[key] is not None:
                    comp.add(prop, vText(changes[key]))
        if "start" in changes:
            comp.pop("DTSTART", None)
            comp.add("DTSTART", changes["start"].astimezone(UTC))
        if "end" in changes:
            comp.pop("DTEND", None)
            comp.pop("DURATION", None)
            comp.add("DTEND", changes["end"].astimezone(UTC))
        if "attendees" in changes:
            comp.pop("ATTENDEE", None)
            for att in changes["attendees"]:
                address = vCalAddress(f"mailto:{att['email']}")
                if att.get("name"):
                    address.params["CN"] = att["name"]
                address.params["PARTSTAT"] = "NEEDS-ACTION"
                comp.add("ATTENDEE", address, encode=False)
        sequence = int(comp.get("SEQUENCE", 0)) + 1
        comp.pop("SEQUENCE", None)
        comp.add("SEQUENCE", sequence)
        comp.pop("DTSTAMP", None)
        comp.add("DTSTAMP", datetime.now(UTC))
    return str(cal.to_ical().decode())
