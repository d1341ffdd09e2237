"""updateCalendarEvent (contract §12 "Calendar identity"): an occurrence of a recurring event is
written as an override (RECURRENCE-ID); event reads answer an ETag and the update honours
If-Match (RFC 9110: 412 `precondition_failed`, nothing changed); the provider is called with no
database transaction open. Against a real Radicale."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from icalendar import Calendar
from sqlalchemy import delete

from salesplan.models.calendar import CalendarConnection, CalendarEvent
from tests.calendar.proxy import proxy
from tests.calendar.radicale_server import Radicale, ics_event
from tests.calendar.test_calendar import API, connect, connected_with, drain, events
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import Actor


def _vevents(ics: str) -> list[Any]:
    return list(Calendar.from_ical(ics).walk("VEVENT"))


async def _get(client: httpx.AsyncClient, actor: Actor, event_id: str, **headers: str) -> Any:
    return await client.get(f"{API}/events/{event_id}", headers=actor.in_org() | headers)


async def _sync(client: httpx.AsyncClient, actor: Actor, worker: Any) -> None:
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    await client.post(f"{API}/connections/{conn['id']}/sync", headers=actor.in_org())
    await drain(worker)


# -- recurring events ----------------------------------------------------------------------


async def test_updating_one_occurrence_writes_an_override(
    client, actor, radicale: Radicale, worker
) -> None:
    uid = str(uuid.uuid4())
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    _, (href,) = await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(uid, title="Weekly", start=start, rrule="FREQ=WEEKLY;COUNT=3"),
    )
    occurrences = sorted(await events(client, actor), key=lambda e: e["start"])
    second = occurrences[1]
    moved = start + timedelta(days=7, hours=2)
    r = await client.patch(
        f"{API}/events/{second['id']}",
        headers=actor.in_org(),
        json={
            "title": "Weekly, moved",
            "start": moved.isoformat(),
            "end": (moved + timedelta(minutes=45)).isoformat(),
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == second["id"] and body["title"] == "Weekly, moved"
    assert body["recurrenceId"] == second["recurrenceId"]
    assert body["start"] == moved.isoformat().replace("+00:00", "Z")

    # At the provider: the series untouched, one override for that occurrence.
    master, override = _vevents(radicale.get(href).text)
    assert master.get("RECURRENCE-ID") is None
    assert str(master["SUMMARY"]) == "Weekly" and master.get("RRULE") is not None
    assert master.decoded("DTSTART") == start
    assert override.get("RRULE") is None
    assert override.decoded("RECURRENCE-ID") == start + timedelta(days=7)
    assert str(override["SUMMARY"]) == "Weekly, moved"
    assert override.decoded("DTSTART") == moved

    # A sync keeps the same events (ids), the override's values on its occurrence only.
    await _sync(client, actor, worker)
    after = {e["id"]: e for e in await events(client, actor)}
    assert set(after) == {e["id"] for e in occurrences}
    assert after[second["id"]]["title"] == "Weekly, moved"
    assert after[second["id"]]["start"] == body["start"]
    assert {after[e["id"]]["title"] for e in (occurrences[0], occurrences[2])} == {"Weekly"}

    # A second update of that occurrence edits its override (no second one).
    r = await client.patch(
        f"{API}/events/{second['id']}", headers=actor.in_org(), json={"location": "Room 2"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["title"] == "Weekly, moved" and r.json()["location"] == "Room 2"
    vevents = _vevents(radicale.get(href).text)
    assert len(vevents) == 2 and str(vevents[1]["LOCATION"]) == "Room 2"


async def test_an_all_day_occurrence_gets_a_date_recurrence_id(
    client, actor, radicale: Radicale, worker
) -> None:
    day = (datetime.now(UTC) + timedelta(days=2)).date()
    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uuid.uuid4()}\r\nDTSTAMP:20261101T000000Z\r\n"
        f"DTSTART;VALUE=DATE:{day:%Y%m%d}\r\nDTEND;VALUE=DATE:{day + timedelta(days=1):%Y%m%d}\r\n"
        "SUMMARY:Offsite\r\nRRULE:FREQ=DAILY;COUNT=2\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    _, (href,) = await connected_with(client, actor, radicale, worker, ics)
    last = sorted(await events(client, actor), key=lambda e: e["start"])[1]
    r = await client.patch(
        f"{API}/events/{last['id']}", headers=actor.in_org(), json={"title": "Offsite day 2"}
    )
    assert r.status_code == 200, r.text
    _, override = _vevents(radicale.get(href).text)
    assert override.decoded("RECURRENCE-ID") == day + timedelta(days=1)
    await _sync(client, actor, worker)
    titles = {e["id"]: e["title"] for e in await events(client, actor)}
    assert titles[last["id"]] == "Offsite day 2" and len(titles) == 2


# -- ETag and If-Match ---------------------------------------------------------------------


async def test_event_reads_answer_an_etag(client, actor, radicale: Radicale, worker) -> None:
    await connected_with(client, actor, radicale, worker, ics_event(title="Tagged"))
    (listed,) = await events(client, actor)
    r = await _get(client, actor, listed["id"])
    tag = r.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')
    assert listed["etag"] == tag == r.json()["etag"]
    assert (await _get(client, actor, listed["id"])).headers["etag"] == tag
    cached = await _get(client, actor, listed["id"], **{"If-None-Match": tag})
    assert cached.status_code == 304 and cached.content == b""


async def test_if_match_that_no_longer_matches_is_412_and_changes_nothing(
    client, actor, radicale: Radicale, worker
) -> None:
    _, (href,) = await connected_with(client, actor, radicale, worker, ics_event(title="Draft"))
    (event,) = await events(client, actor)
    tag = (await _get(client, actor, event["id"])).headers["etag"]

    # Someone else's update moves the tag on.
    r = await client.patch(
        f"{API}/events/{event['id']}",
        headers=actor.in_org() | {"If-Match": tag},
        json={"title": "First"},
    )
    assert r.status_code == 200, r.text
    new_tag = r.headers["etag"]
    assert new_tag != tag and new_tag == r.json()["etag"]
    assert (await _get(client, actor, event["id"])).headers["etag"] == new_tag

    for stale in (tag, f"W/{new_tag}", '"bogus"'):
        r = await client.patch(
            f"{API}/events/{event['id']}",
            headers=actor.in_org() | {"If-Match": stale},
            json={"title": "Second"},
        )
        assert_envelope(r, 412, "precondition_failed")
    assert "SUMMARY:First" in radicale.get(href).text
    assert (await _get(client, actor, event["id"])).json()["title"] == "First"

    for i, form in enumerate(("{tag}", '"other", {tag}', "*")):
        current = form.format(tag=new_tag)
        r = await client.patch(
            f"{API}/events/{event['id']}",
            headers=actor.in_org() | {"If-Match": current},
            json={"location": f"Room {i}"},
        )
        assert r.status_code == 200, (current, r.text)
        assert r.json()["location"] == f"Room {i}"
        new_tag = r.headers["etag"]


async def test_if_match_on_another_organizations_event_is_404(
    client, actor, radicale: Radicale, worker, db
) -> None:
    from tests.fixtures.factories import make_actor

    await connected_with(client, actor, radicale, worker, ics_event())
    (event,) = await events(client, actor)
    stranger = await make_actor(db)
    r = await client.patch(
        f"{API}/events/{event['id']}",
        headers=stranger.in_org() | {"If-Match": "*"},
        json={"title": "x"},
    )
    assert_envelope(r, 404, "not_found")


# -- no transaction across the provider call -----------------------------------------------


async def test_the_provider_is_called_with_no_database_connection_held(
    client, actor, app, radicale: Radicale, worker, db
) -> None:
    pool = app.state.engine.pool
    seen: list[tuple[str, int]] = []

    def hook(method: str, _path: str) -> None:
        seen.append((method, pool.checkedout()))

    with proxy(radicale.base_url, hook) as base:
        url = radicale.new_calendar().replace(radicale.base_url, base)
        radicale.put_event(url.replace(base, radicale.base_url), ics_event(title="Held?"))
        await connect(client, actor, url)
        await drain(worker)
        (event,) = await events(client, actor)
        seen.clear()
        r = await client.patch(
            f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Free"}
        )
        assert r.status_code == 200, r.text
    assert "PUT" in [m for m, _ in seen]
    assert all(held == 0 for _, held in seen), seen


async def test_the_connection_check_holds_no_database_connection(
    client, actor, app, radicale: Radicale
) -> None:
    pool = app.state.engine.pool
    seen: list[tuple[str, int]] = []
    with proxy(radicale.base_url, lambda m, _p: seen.append((m, pool.checkedout()))) as base:
        url = radicale.new_calendar().replace(radicale.base_url, base)
        await connect(client, actor, url)
    assert seen and all(held == 0 for _, held in seen), seen


async def test_an_event_removed_during_the_provider_call_is_404(
    client, actor, app, radicale: Radicale, worker
) -> None:
    """The row went while the provider was writing (the connection was deleted, a sync removed
    it): the answer says so instead of writing a row that no longer exists."""
    loop = asyncio.get_running_loop()

    async def remove(event_id: uuid.UUID) -> None:
        async with app.state.sessionmaker() as s, s.begin():
            await s.execute(delete(CalendarEvent).where(CalendarEvent.id == event_id))

    target: list[uuid.UUID] = []

    def hook(method: str, _path: str) -> None:
        if method == "PUT" and target:
            asyncio.run_coroutine_threadsafe(remove(target[0]), loop).result(timeout=10)

    with proxy(radicale.base_url, hook) as base:
        url = radicale.new_calendar().replace(radicale.base_url, base)
        radicale.put_event(url.replace(base, radicale.base_url), ics_event(title="Racing"))
        await connect(client, actor, url)
        await drain(worker)
        (event,) = await events(client, actor)
        target.append(uuid.UUID(event["id"]))
        r = await client.patch(
            f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Late"}
        )
    assert_envelope(r, 404, "not_found")
    assert await events(client, actor) == []
    async with app.state.sessionmaker() as s:
        assert await s.get(CalendarConnection, uuid.UUID(event["connectionId"])) is not None


async def test_an_occurrence_of_a_zoned_series_keeps_its_id(
    client, actor, radicale: Radicale, worker
) -> None:
    """A series in a time zone (TZID): the override's RECURRENCE-ID names the occurrence in that
    zone, and the sync finds the same occurrence again."""
    day = (datetime.now(UTC) + timedelta(days=2)).date()
    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n"
        "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"
        "BEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\n"
        "BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n"
        f"BEGIN:VEVENT\r\nUID:{uuid.uuid4()}\r\nDTSTAMP:20261101T000000Z\r\n"
        f"DTSTART;TZID=Europe/Berlin:{day:%Y%m%d}T090000\r\n"
        f"DTEND;TZID=Europe/Berlin:{day:%Y%m%d}T093000\r\n"
        "SUMMARY:Standup\r\nRRULE:FREQ=DAILY;COUNT=3\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    _, (href,) = await connected_with(client, actor, radicale, worker, ics)
    occurrences = sorted(await events(client, actor), key=lambda e: e["start"])
    middle = occurrences[1]
    r = await client.patch(
        f"{API}/events/{middle['id']}", headers=actor.in_org(), json={"title": "Standup (long)"}
    )
    assert r.status_code == 200, r.text
    master, override = _vevents(radicale.get(href).text)
    assert str(master["SUMMARY"]) == "Standup"
    rid = override.decoded("RECURRENCE-ID")
    assert override["RECURRENCE-ID"].params.get("TZID") == "Europe/Berlin"
    assert rid.astimezone(UTC).isoformat() == middle["recurrenceId"]
    await _sync(client, actor, worker)
    titles = {e["id"]: e["title"] for e in await events(client, actor)}
    assert titles == {
        occurrences[0]["id"]: "Standup",
        middle["id"]: "Standup (long)",
        occurrences[2]["id"]: "Standup",
    }
