"""CalDAV through the outbound guard (contract §12, issue 27 items 1 and 9, issue 28 item 6), on
a server whose public URL is not loopback: a refused calendar URL is a 422
`destination_not_allowed` when connecting, whatever its spelling and after a redirect; at sync
and update time the request is not made and the text is "destination not allowed"; every
network failure reads the same; no server reply reaches an answer or the DEBUG log."""

from __future__ import annotations

import logging
import socket
import uuid

from salesplan.calendar.sync import run_calendar_sync
from salesplan.models.calendar import CalendarConnection
from tests.calendar.radicale_server import ics_event
from tests.calendar.test_calendar import API, connect, drain, events
from tests.outbound.conftest import SECRET_BODY, _serve, http_answer, odd_spellings


async def _create(client, actor, url: str, password: str = "alice-pass"):  # type: ignore[no-untyped-def]
    return await client.post(
        f"{API}/connections",
        headers=actor.in_org(),
        json={"url": url, "username": "alice", "password": password},
    )


def _refused(r) -> None:  # type: ignore[no-untyped-def]
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "unprocessable"
    assert error["details"]["reason"] == "destination_not_allowed"
    assert error["details"]["field"] == "url"


async def test_refused_calendar_urls_are_422_and_never_contacted(client, actor, catcher) -> None:
    for url in [
        *odd_spellings(catcher.port),
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1:8740/",
        "http://[::1]:8740/",
    ]:
        _refused(await _create(client, actor, url))
    assert catcher.connections == 0
    listed = await client.get(f"{API}/connections", headers=actor.in_org())
    assert listed.json()["data"] == []


async def test_a_redirect_to_a_refused_address_is_refused(
    client, actor, catcher, redirector, outbound_allow
) -> None:
    outbound_allow("127.0.0.2/32")  # the first server is allowed, where it redirects is not
    _refused(await _create(client, actor, redirector.url(path="/cal/")))
    assert redirector.connections >= 1
    assert catcher.connections == 0


async def test_refused_at_sync_time_the_request_is_not_made(
    client, actor, radicale, worker, outbound_allow
) -> None:
    url = radicale.new_calendar()
    radicale.put_event(url, ics_event(title="Kick-off"))
    await connect(client, actor, url)  # allowed then
    outbound_allow("")  # and no longer
    await drain(worker)
    conn = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    assert conn["lastError"] == "destination not allowed"
    assert conn["lastSyncedAt"] is None
    assert await events(client, actor) == []


async def test_refused_at_update_time_the_request_is_not_made(
    client, actor, radicale, worker, outbound_allow
) -> None:
    url = radicale.new_calendar()
    radicale.put_event(url, ics_event(title="Kick-off"))
    await connect(client, actor, url)
    await drain(worker)
    event = (await events(client, actor))[0]
    outbound_allow("")
    r = await client.patch(
        f"{API}/events/{event['id']}", headers=actor.in_org(), json={"title": "Moved"}
    )
    assert r.status_code == 502, r.text
    assert "destination not allowed" in r.json()["error"]["message"]
    assert (await events(client, actor))[0]["title"] == "Kick-off"


async def test_network_failures_read_the_same_whatever_the_port(
    client, actor, outbound_allow
) -> None:
    """A closed port, a port that accepts and hangs up, a port that speaks something else: no
    open/closed-port oracle."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    hangs_up = _serve("127.0.0.1", b"")
    garbage = _serve("127.0.0.1", b"-ERR unknown command\r\n")
    answers = []
    try:
        for url in (
            f"http://127.0.0.1:{closed}/",
            next(hangs_up).url(),
            next(garbage).url(),
        ):
            r = await _create(client, actor, url)
            assert r.status_code == 422, r.text
            answers.append(r.json()["error"])
    finally:
        next(hangs_up, None)
        next(garbage, None)
    assert all(a == answers[0] for a in answers), answers
    assert answers[0]["details"]["reason"] == "could not connect to the server"


async def test_a_server_reply_is_never_copied_into_an_answer(client, actor, outbound_allow) -> None:
    for answer in (
        http_answer("200 OK", SECRET_BODY),
        http_answer("500 Internal Server Error", SECRET_BODY),
        http_answer("207 Multi-Status", b"<not xml " + SECRET_BODY),
    ):
        server = _serve("127.0.0.1", answer)
        try:
            r = await _create(client, actor, next(server).url())
        finally:
            next(server, None)
        assert r.status_code == 422
        assert SECRET_BODY.decode() not in r.text


async def test_a_wrong_password_names_the_password(client, actor, radicale, outbound_allow) -> None:
    r = await _create(client, actor, radicale.new_calendar(), password="wrong")
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "password"


async def test_debug_logs_hold_no_provider_body(
    client, actor, radicale, worker, caplog, outbound_allow
) -> None:
    secret = f"board-minutes-{uuid.uuid4().hex}"
    url = radicale.new_calendar()
    radicale.put_event(url, ics_event(title="Board", description=secret))
    with caplog.at_level(logging.DEBUG):
        await connect(client, actor, url)
        await drain(worker)
    assert (await events(client, actor))[0]["title"] == "Board"
    assert secret not in caplog.text
    assert "calendar-data" not in caplog.text


async def test_a_failing_sync_records_the_uniform_text(
    client, actor, radicale, worker, db, outbound_allow
) -> None:
    conn = await connect(client, actor, radicale.new_calendar())
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    stored = await db.get(CalendarConnection, uuid.UUID(conn["id"]))
    stored.url = f"http://127.0.0.1:{closed}/alice/x/"
    await db.commit()
    assert await run_calendar_sync(worker) == 1
    after = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"][0]
    assert after["lastError"] == "could not connect to the server"
