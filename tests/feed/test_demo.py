"""`salesplan demo`: a demo account's inbox shows e-mail, Slack and calendar together."""

from __future__ import annotations

from salesplan.demo import load_demo


async def test_demo_account_inbox_shows_all_three_kinds(client, app) -> None:
    async with app.state.sessionmaker() as session:
        demo = await load_demo(session)
        await session.commit()
    async with app.state.sessionmaker() as session:  # a second run loads nothing again
        again = await load_demo(session)
        await session.commit()
    assert demo.created and not again.created
    headers = {"Authorization": f"Bearer {again.api_key}"}
    accounts = (await client.get("/api/v1/accounts", headers=headers)).json()["data"]
    globex = next(a for a in accounts if a["name"] == "Globex")
    r = await client.get(f"/api/v1/accounts/{globex['id']}/inbox", headers=headers)
    assert r.status_code == 200, r.text
    items = r.json()["data"]
    assert sorted(i["type"] for i in items) == ["calendar", "email", "slack"]
    email = next(i for i in items if i["type"] == "email")
    assert email["messageCount"] == 2
    slack = next(i for i in items if i["type"] == "slack")
    thread = await client.get(
        f"/api/v1/accounts/{globex['id']}/inbox/slack-threads/{slack['id']}", headers=headers
    )
    assert [m["direction"] for m in thread.json()["data"]] == ["inbound", "outbound"]
    # another account of the demo sees none of Globex's conversations
    initech = next(a for a in accounts if a["name"] == "Initech")
    r = await client.get(f"/api/v1/accounts/{initech['id']}/inbox", headers=headers)
    assert r.json()["data"] == []
