""" "Add the dates to my calendar": the room's visible milestones and tasks with a target date
as an iCalendar file (RFC 5545), all-day events, from the room's read model only."""

from __future__ import annotations

from datetime import timedelta

from icalendar import Calendar, Event

from salesplan.kit.clock import utcnow
from salesplan.rooms.view import RoomPlan


def plan_ics(plan: RoomPlan, host: str) -> bytes:
    calendar = Calendar()
    calendar.add("prodid", "-//salesplan//buyer rooms//EN")
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", plan.name)
    stamp = utcnow()
    for uid, title, day, done in plan.dated():
        event = Event()
        event.add("uid", f"{uid}@{host}")
        event.add("dtstamp", stamp)
        event.add("dtstart", day)
        event.add("dtend", day + timedelta(days=1))
        kind = "Milestone" if uid.startswith("milestone-") else "Task"
        event.add("summary", f"{kind}: {title}" + (" (done)" if done else ""))
        event.add("description", f"{plan.name}")
        event.add("transp", "TRANSPARENT")
        calendar.add_component(event)
    return calendar.to_ical()
