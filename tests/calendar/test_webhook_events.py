"""calendar_event.created|updated|deleted webhook events (contract §13): a sync that adds,
changes and removes events records one event each, the event as getCalendarEvent answers it."""

from __future__ import annotations

import json
import uuid

from tests.calendar.radicale_server import Radicale, ics_event
from tests.calendar.test_calendar import connected_with, events
from tests.calendar.test_identity import _name, _sync
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx
from tests.webhooks.receiver import Receiver


async def test_a_sync_records_created_updated_and_deleted(
    app, client, actor, radicale: Radicale, worker
) -> None:
    receiver = Receiver().start()
    try:
        await make_endpoint(client, actor, receiver.url, eventTypes=["calendar_event.*"])
        uid = str(uuid.uuid4())
        url, (href, gone) = await connected_with(
            client,
            actor,
            radicale,
            worker,
            ics_event(uid, title="Kick-off"),
            ics_event(title="Goes"),
        )
        await deliver_due(worker_ctx(app))
        created = sorted(json.loads(r.body)["data"]["title"] for r in receiver.received)
        assert created == ["Goes", "Kick-off"]
        assert {json.loads(r.body)["type"] for r in receiver.received} == {"calendar_event.created"}

        radicale.put_event(url, ics_event(uid, title="Kick-off (moved)"), name=_name(href))
        radicale.delete(gone)
        await _sync(client, actor, worker)
        await deliver_due(worker_ctx(app))
        later = {
            json.loads(r.body)["type"]: json.loads(r.body)["data"] for r in receiver.received[2:]
        }
        assert set(later) == {"calendar_event.updated", "calendar_event.deleted"}
        (kept,) = await events(client, actor)
        assert later["calendar_event.updated"]["id"] == kept["id"]
        assert later["calendar_event.updated"]["title"] == "Kick-off (moved)"
        assert later["calendar_event.deleted"]["title"] == "Goes"
    finally:
        receiver.stop()
