"""Calendar (contract §7 "calendar", §11): CalDAV connections, sync, reads, updates, artifacts,
against a real Radicale server."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import select

from salesplan.calendar.sync import run_calendar_sync
from salesplan.models.calendar import CalendarConnection
from salesplan.worker.context import WorkerContext
from tests.calendar.radicale_server import Radicale, free_port, ics_event
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_actor, make_key, make_user
from tests.oauth.conftest import make_oauth_app

API = "/api/v1/calendar"


async def connect(
    client: httpx.AsyncClient,
    actor: Actor,
    url: str,
    user: str = "alice",
    password: str | None = None,
) -> dict[str, Any]:
    r = await client.post(
        f"{API}/connections",
        headers=actor.in_org(),
        json={"url": url, "username": user, "password": password or f"{user}-pass"},
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


async def drain(worker: WorkerContext) -> None:
    while await run_calendar_sync(worker):
        pass


async def events(client: httpx.AsyncClient, actor: Actor, **query: str) -> list[dict[str, Any]]:
    r = await client.get(
        f"{API}/events", headers=actor.in_org(), params={"pageSize": "200", **query}
    )
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


async def connected_with(
    client: httpx.AsyncClient, actor: Actor, radicale: Radicale, worker: WorkerContext, *ics: str
) -> tuple[str, list[str]]:
    url = radicale.new_calendar()
    hrefs = [radicale.put_event(url, x) for x in ics]
    await connect(client, actor, url)
    await drain(worker)
    return url, hrefs


# -- connections ---------------------------------------------------------------------------


async def test_connection_is_created_and_never_shows_the_password(
    client, actor, radicale, db
) -> None:
    url = radicale.new_calendar()
    conn = await connect(client, actor, url)
    assert conn["url"] == url and conn["username"] == "alice"
    assert "password" not in conn and "passwordEncrypted" not in conn
    listed = await client.get(f"{API}/connections", headers=actor.in_org())
    assert [c["id"] for c in listed.json()["data"]] == [conn["id"]]
    assert "alice-pass" not in listed.text
    stored = (await db.execute(select(CalendarConnection))).scalar_one()
    assert stored.password_encrypted and "alice-pass" not in stored.password_encrypted


async def test_connection_with_a_bad_password_is_422_with_the_reason(
    client, actor, radicale
) -> None:
    url = radicale.new_calendar()
    r = await client.post(
        f"{API}/connections",
        headers=actor.in_org(),
        json={"url": url, "username": "alice", "password": "wrong"},
    )
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "unprocessable"
    assert "password" in r.json()["error"]["details"]["reason"]


async def test_connection_to_a_bad_url_is_422(client, actor, radicale) -> None:
    for url in (
        f"{radicale.base_url}/alice/missing-calendar/",
        f"http://127.0.0.1:{free_port()}/cal/",
    ):
        r = await client.post(
            f"{API}/connections",
            headers=actor.in_org(),
            json={"url": url, "username": "alice", "password": "alice-pass"},
        )
        assert r.status_code == 422, url
        assert r.json()["error"]["details"]["reason"]


async def test_connection_url_must_be_http(client, actor) -> None:
    r = await client.post(
        f"{API}/connections",
        headers=actor.in_org(),
        json={"url": "ftp://x/", "username": "a", "password": "b"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "validation_error"


async def test_deleting_a_connection_removes_its_events(client, actor, radicale, worker) -> None:
    await connected_with(client, actor, radicale, worker, ics_event())
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    r = await client.delete(f"{API}/connections/{conn['id']}", headers=actor.in_org())
    assert r.status_code == 204
    assert await events(client, actor) == []
    assert (
        await client.delete(f"{API}/connections/{conn['id']}", headers=actor.in_org())
    ).status_code == 404


async def test_sync_request_answers_202_and_marks_the_connection_due(
    client, actor, radicale, worker
) -> None:
    url = radicale.new_calendar()
    conn = await connect(client, actor, url)
    await drain(worker)
    radicale.put_event(url, ics_event(title="Added later"))
    r = await client.post(f"{API}/connections/{conn['id']}/sync", headers=actor.in_org())
    assert r.status_code == 202 and r.json()["syncRequestedAt"]
    await drain(worker)
    assert [e["title"] for e in await events(client, actor)] == ["Added later"]
    after = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    assert after["syncRequestedAt"] is None and after["lastSyncedAt"]


# -- sync ----------------------------------------------------------------------------------


async def test_sync_pulls_events_with_attendees_and_links_accounts(
    client, actor, radicale, worker, db
) -> None:
    account, _ = await make_account(db, actor.org.id, name="Acme", domain="acme.com")
    other, _ = await make_account(db, actor.org.id, name="Globex")
    await make_contact(db, other, email="Hank@globex.io")
    await db.commit()
    await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(title="Acme call", attendees=("wile@acme.com",)),
        ics_event(title="Globex call", attendees=("hank@globex.io",)),
        ics_event(title="Nobody", attendees=("x@unknown.org",)),
    )
    got = {e["title"]: e for e in await events(client, actor)}
    assert got["Acme call"]["accountId"] == str(account.id)
    assert got["Globex call"]["accountId"] == str(other.id)
    assert got["Nobody"]["accountId"] is None
    assert got["Acme call"]["attendees"][0]["email"] == "wile@acme.com"
    only = await events(client, actor, accountId=str(account.id))
    assert [e["title"] for e in only] == ["Acme call"]


async def test_sync_keeps_to_the_window(client, actor, radicale, worker) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(title="Old", start=now - timedelta(days=45)),
        ics_event(title="Recent", start=now - timedelta(days=10)),
        ics_event(title="Far", start=now + timedelta(days=120)),
    )
    assert [e["title"] for e in await events(client, actor)] == ["Recent"]


async def test_recurring_events_are_expanded(client, actor, radicale, worker) -> None:
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(title="Weekly", start=start, rrule="FREQ=WEEKLY;COUNT=4"),
    )
    got = await events(client, actor)
    assert len(got) == 4
    assert all(e["recurring"] for e in got)
    assert len({e["start"] for e in got}) == 4


async def test_changes_and_deletions_on_the_server_are_reflected(
    client, actor, radicale, worker
) -> None:
    uid = str(uuid.uuid4())
    url, (first, second) = await connected_with(
        client, actor, radicale, worker, ics_event(uid, title="Before"), ics_event(title="Doomed")
    )
    radicale.put_event(
        url, ics_event(uid, title="After"), name=first.rsplit("/", 1)[1].removesuffix(".ics")
    )
    radicale.delete(second)
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    await client.post(f"{API}/connections/{conn['id']}/sync", headers=actor.in_org())
    await drain(worker)
    assert [e["title"] for e in await events(client, actor)] == ["After"]


async def test_an_incremental_sync_transfers_only_the_changed_objects(
    client, actor, radicale, worker
) -> None:
    from salesplan.calendar.sync import sync_connection

    url, _hrefs = await connected_with(
        client, actor, radicale, worker, *(ics_event() for _ in range(5))
    )
    radicale.put_event(url, ics_event(title="New"))
    conn_id = uuid.UUID(
        (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]["id"]
    )
    async with worker.sessionmaker() as s, s.begin():
        c = await s.get(CalendarConnection, conn_id)
        assert c is not None and c.sync_token
        c.lease_owner = worker.worker_id
    assert await sync_connection(worker, conn_id) == 1
    assert len(await events(client, actor)) == 6


async def test_a_failing_server_is_recorded_and_retried_later(
    client, actor, radicale, worker, db
) -> None:
    url = radicale.new_calendar()
    conn = await connect(client, actor, url)
    stored = await db.get(CalendarConnection, uuid.UUID(conn["id"]))
    stored.url = f"http://127.0.0.1:{free_port()}/alice/x/"
    await db.commit()
    assert await run_calendar_sync(worker) == 1
    assert await run_calendar_sync(worker) == 0  # backs off instead of retrying at once
    after = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    assert after["lastError"] and after["lastSyncedAt"] is None


# -- reads and visibility ------------------------------------------------------------------


async def test_events_filter_by_from_and_to(client, actor, radicale, worker) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    await connected_with(
        client,
        actor,
        radicale,
        worker,
        ics_event(title="Soon", start=now + timedelta(days=1)),
        ics_event(title="Later", start=now + timedelta(days=20)),
    )
    since = (now + timedelta(days=10)).isoformat().replace("+00:00", "Z")
    assert [e["title"] for e in await events(client, actor, **{"from": since})] == ["Later"]
    assert [e["title"] for e in await events(client, actor, to=since)] == ["Soon"]
    bad = await client.get(f"{API}/events", headers=actor.in_org(), params={"from": "yesterday"})
    assert bad.status_code == 400


async def _teammate(db, actor: Actor, role: str) -> Actor:
    user = await make_user(db, actor.org, role=role)
    return Actor(actor.org, user, await make_key(db, user))


async def test_admin_and_consultant_read_teammates_events_members_get_403(
    client, actor, radicale, worker, db
) -> None:
    owner = await _teammate(db, actor, "member")
    await connected_with(client, owner, radicale, worker, ics_event(title="Private"))
    event = (await events(client, owner))[0]
    for role in ("admin", "consultant"):
        reader = await _teammate(db, actor, role)
        assert [e["title"] for e in await events(client, reader, userId=str(owner.user.id))] == [
            "Private"
        ]
        assert await events(client, reader) == []
        r = await client.get(f"{API}/events/{event['id']}", headers=reader.in_org())
        assert r.status_code == 200
    member = await _teammate(db, actor, "member")
    r = await client.get(
        f"{API}/events", headers=member.in_org(), params={"userId": str(owner.user.id)}
    )
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    r = await client.get(f"{API}/events/{event['id']}", headers=member.in_org())
    assert r.status_code == 403


async def test_app_tokens_get_403_user_token_required(client, actor, db) -> None:
    machine = await make_oauth_app(
        db,
        actor,
        grant_types=["client_credentials"],
        scopes=["calendar:read", "calendar:write"],
        organization_ids=[actor.org.id],
    )
    token = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": "calendar:read calendar:write"},
        auth=(machine.app.client_id, machine.secret),
    )
    headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
    for method, path in (
        ("GET", "/events"),
        ("GET", f"/events/{uuid.uuid4()}"),
        ("PATCH", f"/events/{uuid.uuid4()}"),
        ("GET", "/connections"),
        ("POST", "/connections"),
    ):
        r = await client.request(method, API + path, headers=headers, json={})
        assert r.status_code == 403, path
        assert r.json()["error"]["details"]["reason"] == "user_token_required"


async def test_calendar_scopes_are_required(client, db, actor) -> None:
    reader = await make_actor(db, scopes=["calendar:read"])
    r = await client.patch(f"{API}/events/{uuid.uuid4()}", headers=reader.in_org(), json={})
    assert (
        r.status_code == 403 and r.json()["error"]["details"]["requiredScope"] == "calendar:write"
    )
    none = await make_actor(db, scopes=["accounts:read"])
    r = await client.get(f"{API}/events", headers=none.in_org())
    assert r.status_code == 403 and r.json()["error"]["details"]["requiredScope"] == "calendar:read"


async def test_another_organizations_event_is_404(client, actor, radicale, worker, db) -> None:
    await connected_with(client, actor, radicale, worker, ics_event())
    event = (await events(client, actor))[0]
    stranger = await make_actor(db)
    r = await client.get(f"{API}/events/{event['id']}", headers=stranger.in_org())
    assert r.status_code == 404
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=stranger.in_org(), json={"title": "x"}
    )
    assert r.status_code == 404
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    r = await client.post(f"{API}/connections/{conn['id']}/sync", headers=stranger.in_org())
    assert r.status_code == 404


# -- updates -------------------------------------------------------------------------------


async def test_update_is_pushed_to_the_server_and_stored(
    client, actor, radicale, worker, db
) -> None:
    account, _ = await make_account(db, actor.org.id, name="Initech", domain="initech.com")
    await db.commit()
    _, (href,) = await connected_with(client, actor, radicale, worker, ics_event(title="Draft"))
    event = (await events(client, actor))[0]
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(days=3)
    r = await client.patch(
        f"{API}/events/{event['id']}",
        headers=actor.in_org(),
        json={
            "title": "Final",
            "location": "Room 1",
            "start": start.isoformat(),
            "end": (start + timedelta(hours=1)).isoformat(),
            "attendees": [{"email": "peter@initech.com", "name": "Peter"}],
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["title"] == "Final" and body["location"] == "Room 1"
    assert body["accountId"] == str(account.id)
    on_server = radicale.get(href).text
    assert "SUMMARY:Final" in on_server and "peter@initech.com" in on_server
    assert (await client.get(f"{API}/events/{event['id']}", headers=actor.in_org())).json()[
        "title"
    ] == "Final"
    # A later sync sees our own write as unchanged.
    await client.post(f"{API}/connections/{event['connectionId']}/sync", headers=actor.in_org())
    await drain(worker)
    assert [e["title"] for e in await events(client, actor)] == ["Final"]


async def test_update_of_an_event_changed_on_the_server_is_409(
    client, actor, radicale, worker
) -> None:
    uid = str(uuid.uuid4())
    url, (href,) = await connected_with(
        client, actor, radicale, worker, ics_event(uid, title="Mine")
    )
    radicale.put_event(
        url, ics_event(uid, title="Theirs"), name=href.rsplit("/", 1)[1].removesuffix(".ics")
    )
    event = (await events(client, actor))[0]
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Ours"}
    )
    assert r.status_code == 409 and r.json()["error"]["code"] == "conflict"
    assert "SUMMARY:Theirs" in radicale.get(href).text
    assert (await client.get(f"{API}/events/{event['id']}", headers=actor.in_org())).json()[
        "title"
    ] == "Mine"


async def test_update_when_the_provider_is_down_is_502_and_changes_nothing(
    client, actor, radicale, worker, db
) -> None:
    await connected_with(client, actor, radicale, worker, ics_event(title="Stable"))
    event = (await events(client, actor))[0]
    stored = await db.get(CalendarConnection, uuid.UUID(event["connectionId"]))
    stored.url = f"http://127.0.0.1:{free_port()}/alice/x/"
    await db.commit()
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Lost"}
    )
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_error"
    assert (await client.get(f"{API}/events/{event['id']}", headers=actor.in_org())).json()[
        "title"
    ] == "Stable"


async def test_only_the_owner_may_update_an_event(client, actor, radicale, worker, db) -> None:
    owner = await _teammate(db, actor, "member")
    await connected_with(client, owner, radicale, worker, ics_event(title="Theirs"))
    event = (await events(client, owner))[0]
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Mine"}
    )
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


async def test_update_rejects_unknown_properties_and_end_before_start(
    client, actor, radicale, worker
) -> None:
    await connected_with(client, actor, radicale, worker, ics_event())
    event = (await events(client, actor))[0]
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"colour": "red"}
    )
    assert r.status_code == 400
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"end": "2000-01-01T00:00:00Z"}
    )
    assert r.status_code == 400


# -- artifacts -----------------------------------------------------------------------------


async def test_artifacts_are_stored_and_read_404_when_absent(
    client, actor, radicale, worker
) -> None:
    await connected_with(client, actor, radicale, worker, ics_event())
    event_id = (await events(client, actor))[0]["id"]
    for part in ("summary", "action-items", "transcript"):
        r = await client.get(f"{API}/events/{event_id}/{part}", headers=actor.in_org())
        assert r.status_code == 404, part
    r = await client.put(
        f"{API}/events/{event_id}/artifacts",
        headers=actor.in_org(),
        json={
            "summary": "We agreed.",
            "actionItems": [
                {"text": "Send the quote", "assigneeEmail": "a@b.com", "dueDate": "2026-12-01"},
                {"text": "Book a demo", "completed": True},
            ],
            "transcript": {"segments": [{"speaker": "Ann", "startSeconds": 1.5, "text": "Hello"}]},
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["summary"] == "We agreed."
    s = (await client.get(f"{API}/events/{event_id}/summary", headers=actor.in_org())).json()
    assert s["eventId"] == event_id and s["summary"] == "We agreed." and s["updatedAt"]
    items = (
        await client.get(f"{API}/events/{event_id}/action-items", headers=actor.in_org())
    ).json()
    assert [i["text"] for i in items["data"]] == ["Send the quote", "Book a demo"]
    assert items["data"][0]["id"] and items["data"][0]["dueDate"] == "2026-12-01"
    assert items["pagination"]["totalCount"] == 2
    t = (await client.get(f"{API}/events/{event_id}/transcript", headers=actor.in_org())).json()
    assert t == {
        "eventId": event_id,
        "segments": [{"speaker": "Ann", "startSeconds": 1.5, "text": "Hello"}],
    }
    # A part left out stays as it was.
    r = await client.put(
        f"{API}/events/{event_id}/artifacts", headers=actor.in_org(), json={"summary": "Revised."}
    )
    assert len(r.json()["actionItems"]) == 2 and r.json()["transcript"] is not None
