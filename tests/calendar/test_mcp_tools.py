"""The calendar MCP tools answer what the REST operations of the same name answer, over the same
services (real HTTP with the SDK's client, a real Radicale behind)."""

from __future__ import annotations

from tests.calendar.radicale_server import ics_event
from tests.calendar.test_calendar import API, connect, drain, events
from tests.fixtures.factories import make_actor, make_key, make_user
from tests.mcp.conftest import body, error, rest_body
from tests.mcp.conftest import connect as mcp_connect


async def test_calendar_tools_answer_the_rest_bodies(mcp, db, client, radicale, worker) -> None:
    actor = await make_actor(db)
    url = radicale.new_calendar()
    radicale.put_event(url, ics_event(title="Kick-off"))
    await connect(client, actor, url)
    await drain(worker)
    event = (await events(client, actor))[0]
    await client.put(
        f"{API}/events/{event['id']}/artifacts",
        headers=actor.in_org(),
        json={
            "summary": "Done.",
            "actionItems": [{"text": "Follow up"}],
            "transcript": {"segments": [{"speaker": "A", "startSeconds": 0, "text": "Hi"}]},
        },
    )
    async with mcp_connect(mcp.url, actor.key) as c:
        listed = body(await c.call_tool("listCalendarEvents", {"pageSize": 10}))
        one = body(await c.call_tool("getCalendarEvent", {"eventId": event["id"]}))
        summary = body(await c.call_tool("getCalendarEventSummary", {"eventId": event["id"]}))
        items = body(await c.call_tool("getCalendarEventActionItems", {"eventId": event["id"]}))
        transcript = body(await c.call_tool("getCalendarEventTranscript", {"eventId": event["id"]}))
    assert listed == await rest_body(mcp, actor.key, "/calendar/events?pageSize=10")
    assert one == await rest_body(mcp, actor.key, f"/calendar/events/{event['id']}")
    assert summary == await rest_body(mcp, actor.key, f"/calendar/events/{event['id']}/summary")
    assert items == await rest_body(mcp, actor.key, f"/calendar/events/{event['id']}/action-items")
    assert transcript == await rest_body(
        mcp, actor.key, f"/calendar/events/{event['id']}/transcript"
    )
    assert summary["summary"] == "Done." and items["data"][0]["text"] == "Follow up"


async def test_update_calendar_event_tool_pushes_to_the_server(
    mcp, db, client, radicale, worker
) -> None:
    actor = await make_actor(db)
    url = radicale.new_calendar()
    href = radicale.put_event(url, ics_event(title="Old"))
    await connect(client, actor, url)
    await drain(worker)
    event = (await events(client, actor))[0]
    async with mcp_connect(mcp.url, actor.key) as c:
        updated = body(
            await c.call_tool("updateCalendarEvent", {"eventId": event["id"], "title": "New"})
        )
        missing = error(await c.call_tool("getCalendarEventSummary", {"eventId": event["id"]}))
    assert updated["title"] == "New"
    assert "SUMMARY:New" in radicale.get(href).text
    assert missing["code"] == "not_found"


async def test_members_cannot_read_teammates_events_through_the_tools(
    mcp, db, client, radicale, worker
) -> None:
    actor = await make_actor(db)
    member = await make_user(db, actor.org, role="member")
    key = await make_key(db, member)
    async with mcp_connect(mcp.url, key) as c:
        refused = error(await c.call_tool("listCalendarEvents", {"userId": str(actor.user.id)}))
    assert refused["code"] == "forbidden"
