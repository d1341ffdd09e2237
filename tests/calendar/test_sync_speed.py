"""What an incremental sync costs beyond the server's own answer (bench/calendar_sync.py has
the figures): credentials go with the first request once the server asked for them, so no sync
pays the 401 round trip that servers slow down on purpose (Radicale: 0.5 to 1.5 s)."""

from __future__ import annotations

import uuid

from salesplan.calendar.sync import sync_connection
from salesplan.models.calendar import CalendarConnection
from tests.calendar.proxy import proxy
from tests.calendar.radicale_server import Radicale, ics_event
from tests.calendar.test_calendar import connect, drain, events


async def test_a_later_sync_sends_credentials_with_its_first_request(
    client, actor, radicale: Radicale, worker
) -> None:
    seen: list[tuple[str, bool, int]] = []
    with proxy(radicale.base_url, seen=seen) as base:
        direct = radicale.new_calendar()
        radicale.put_event(direct, ics_event(title="One"))
        conn = await connect(client, actor, direct.replace(radicale.base_url, base))
        await drain(worker)
        assert [e["title"] for e in await events(client, actor)] == ["One"]
        radicale.put_event(direct, ics_event(title="Two"))
        seen.clear()
        async with worker.sessionmaker() as s, s.begin():
            row = await s.get(CalendarConnection, uuid.UUID(conn["id"]))
            assert row is not None
            row.lease_owner = worker.worker_id
        assert await sync_connection(worker, uuid.UUID(conn["id"])) == 1
    assert seen == [("REPORT", True, 207), ("REPORT", True, 207)], seen
    assert sorted(e["title"] for e in await events(client, actor)) == ["One", "Two"]
