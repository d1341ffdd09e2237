"""Calendar identity (contract §12 "Calendar identity"): an event is its provider's event,
(connection, UID, RECURRENCE-ID). A change at the provider updates it in place — same id, its
artifacts kept — and only an event gone from the provider is removed. Against a real Radicale."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from salesplan.models.calendar import CalendarConnection
from salesplan.worker.context import WorkerContext
from tests.calendar.radicale_server import Radicale, ics_event
from tests.calendar.test_calendar import API, connected_with, drain, events
from tests.fixtures.crm import make_account
from tests.fixtures.factories import Actor

ARTIFACTS = {
    "summary": "We agreed on the pilot.",
    "actionItems": [{"text": "Send the quote"}],
    "transcript": {"segments": [{"speaker": "Ann", "startSeconds": 0, "text": "Hello"}]},
}


def _name(href: str) -> str:
    return href.rsplit("/", 1)[1].removesuffix(".ics")


async def _sync(client: httpx.AsyncClient, actor: Actor, worker: WorkerContext) -> None:
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    r = await client.post(f"{API}/connections/{conn['id']}/sync", headers=actor.in_org())
    assert r.status_code == 202
    await drain(worker)


async def _store_artifacts(client: httpx.AsyncClient, actor: Actor, event_id: str) -> None:
    r = await client.put(
        f"{API}/events/{event_id}/artifacts", headers=actor.in_org(), json=ARTIFACTS
    )
    assert r.status_code == 200, r.text


async def _artifacts_of(client: httpx.AsyncClient, actor: Actor, event_id: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("summary", "action-items", "transcript"):
        r = await client.get(f"{API}/events/{event_id}/{part}", headers=actor.in_org())
        out[part] = r.json() if r.status_code == 200 else r.status_code
    return out


async def test_a_change_at_the_provider_keeps_the_id_and_the_artifacts(
    client, actor, radicale: Radicale, worker
) -> None:
    uid = str(uuid.uuid4())
    start = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    url, (href,) = await connected_with(
        client, actor, radicale, worker, ics_event(uid, title="Kick-off", start=start)
    )
    (event,) = await events(client, actor)
    await _store_artifacts(client, actor, event["id"])

    # Renamed, moved by a day and an attendee added, in the calendar app.
    moved = start + timedelta(days=1, hours=2)
    radicale.put_event(
        url,
        ics_event(uid, title="Kick-off (moved)", start=moved, attendees=("new@acme.com",)),
        name=_name(href),
    )
    await _sync(client, actor, worker)

    (after,) = await events(client, actor)
    assert after["id"] == event["id"]
    assert after["title"] == "Kick-off (moved)"
    assert after["start"] == moved.isoformat().replace("+00:00", "Z")
    assert [a["email"] for a in after["attendees"]] == ["new@acme.com"]
    kept = await _artifacts_of(client, actor, event["id"])
    assert kept["summary"]["summary"] == "We agreed on the pilot."
    assert [i["text"] for i in kept["action-items"]["data"]] == ["Send the quote"]
    assert kept["transcript"]["segments"][0]["text"] == "Hello"


async def test_an_event_stored_under_a_new_href_keeps_its_id(
    client, actor, radicale: Radicale, worker
) -> None:
    """Some servers re-create an object under another name: the UID still names the event."""
    uid = str(uuid.uuid4())
    url, (href,) = await connected_with(
        client, actor, radicale, worker, ics_event(uid, title="Demo")
    )
    (event,) = await events(client, actor)
    await _store_artifacts(client, actor, event["id"])
    radicale.delete(href)
    radicale.put_event(url, ics_event(uid, title="Demo renamed"))
    await _sync(client, actor, worker)
    (after,) = await events(client, actor)
    assert after["id"] == event["id"] and after["title"] == "Demo renamed"
    assert (await _artifacts_of(client, actor, event["id"]))["summary"]["summary"]


async def test_only_an_event_gone_from_the_provider_is_removed(
    client, actor, radicale: Radicale, worker
) -> None:
    _, (_, gone_href) = await connected_with(
        client, actor, radicale, worker, ics_event(title="Stays"), ics_event(title="Goes")
    )
    by_title = {e["title"]: e for e in await events(client, actor)}
    for e in by_title.values():
        await _store_artifacts(client, actor, e["id"])
    radicale.delete(gone_href)
    await _sync(client, actor, worker)
    assert [e["title"] for e in await events(client, actor)] == ["Stays"]
    gone = by_title["Goes"]["id"]
    r = await client.get(f"{API}/events/{gone}", headers=actor.in_org())
    assert r.status_code == 404
    assert (await _artifacts_of(client, actor, gone))["summary"] == 404
    stays = by_title["Stays"]["id"]
    assert (await _artifacts_of(client, actor, stays))["summary"]["summary"]


async def test_a_changed_series_keeps_each_occurrence_and_its_artifacts(
    client, actor, radicale: Radicale, worker
) -> None:
    uid = str(uuid.uuid4())
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    url, (href,) = await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(uid, title="Weekly", start=start, rrule="FREQ=WEEKLY;COUNT=3"),
    )
    before = {e["recurrenceId"]: e["id"] for e in await events(client, actor)}
    assert len(before) == 3
    second = sorted(before)[1]
    await _store_artifacts(client, actor, before[second])
    radicale.put_event(
        url,
        ics_event(
            uid, title="Weekly sync", start=start, rrule="FREQ=WEEKLY;COUNT=3", description="x"
        ),
        name=_name(href),
    )
    await _sync(client, actor, worker)
    after = await events(client, actor)
    assert {e["recurrenceId"]: e["id"] for e in after} == before
    assert {e["title"] for e in after} == {"Weekly sync"}
    assert (await _artifacts_of(client, actor, before[second]))["summary"]["summary"]


async def test_a_full_resync_after_a_lost_token_keeps_every_event(
    client, actor, radicale: Radicale, worker, db
) -> None:
    """The server no longer knows our sync token: everything is listed again, and the events
    that did not change stay as they are (same ids)."""
    url, _ = await connected_with(
        client, actor, radicale, worker, ics_event(title="One"), ics_event(title="Two")
    )
    before = {e["title"]: e["id"] for e in await events(client, actor)}
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    stored = await db.get(CalendarConnection, uuid.UUID(conn["id"]))
    stored.sync_token = "http://radicale.org/ns/sync/" + "0" * 64  # unknown to the server
    await db.commit()
    radicale.put_event(url, ics_event(title="Three"))
    await _sync(client, actor, worker)
    after = {e["title"]: e["id"] for e in await events(client, actor)}
    assert {k: after.get(k) for k in before} == before
    assert set(after) == {"One", "Two", "Three"}
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    assert conn["lastError"] is None


async def test_the_meeting_keeps_one_inbox_thread_when_it_changes(
    client, actor, radicale: Radicale, worker, db
) -> None:
    account, _ = await make_account(db, actor.org.id, name="Acme", domain="acme.com")
    await db.commit()
    uid = str(uuid.uuid4())
    url, (href,) = await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(uid, title="Pricing", attendees=("ceo@acme.com",)),
    )
    inbox = f"/api/v1/accounts/{account.id}/inbox"
    first = (await client.get(inbox, headers=actor.in_org(), params={"type": "calendar"})).json()
    assert [t["subject"] for t in first["data"]] == ["Pricing"]
    radicale.put_event(
        url,
        ics_event(uid, title="Pricing round 2", attendees=("ceo@acme.com",)),
        name=_name(href),
    )
    await _sync(client, actor, worker)
    after = (await client.get(inbox, headers=actor.in_org(), params={"type": "calendar"})).json()
    assert [t["subject"] for t in after["data"]] == ["Pricing round 2"]
    assert after["data"][0]["id"] == first["data"][0]["id"]
    assert after["data"][0]["messageCount"] == 1


async def test_an_update_through_the_api_renames_the_meetings_inbox_thread(
    client, actor, radicale: Radicale, worker, db
) -> None:
    """updateCalendarEvent writes the event and, in the same transaction, its feed thread (the
    `CalendarEventChanged` domain event): the inbox shows the new title at once, no sync."""
    account, _ = await make_account(db, actor.org.id, name="Acme", domain="acme.com")
    await db.commit()
    uid = str(uuid.uuid4())
    await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(uid, title="Pricing", attendees=("ceo@acme.com",)),
    )
    inbox = f"/api/v1/accounts/{account.id}/inbox"
    first = (await client.get(inbox, headers=actor.in_org(), params={"type": "calendar"})).json()
    assert [t["subject"] for t in first["data"]] == ["Pricing"]
    (event,) = await events(client, actor)
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Pricing, final"}
    )
    assert r.status_code == 200, r.text
    after = (await client.get(inbox, headers=actor.in_org(), params={"type": "calendar"})).json()
    assert [t["subject"] for t in after["data"]] == ["Pricing, final"]
    assert after["data"][0]["id"] == first["data"][0]["id"]
