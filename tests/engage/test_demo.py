"""`salesplan demo` loads templates (contract §10) that render for its contacts."""

from __future__ import annotations

from salesplan.demo import load_demo
from tests.engage.helpers import API


async def test_demo_loads_templates_that_render_for_its_contacts(client, app) -> None:
    async with app.state.sessionmaker() as session:
        demo = await load_demo(session)
        await session.commit()
    headers = {"Authorization": f"Bearer {demo.api_key}"}
    templates = (await client.get(f"{API}/templates", headers=headers)).json()["data"]
    assert {t["channel"] for t in templates} == {"EMAIL", "LINKEDIN", "SLACK"}
    contact = (await client.get("/api/v1/contacts", headers=headers)).json()["data"][0]
    email = next(t for t in templates if t["channel"] == "EMAIL")
    resp = await client.post(
        f"{API}/templates/{email['id']}/preview", json={"contactId": contact["id"]}, headers=headers
    )
    assert resp.status_code == 200 and resp.json()["unknownFields"] == []
    assert contact["firstName"] in resp.json()["body"]
    campaigns = (await client.get(f"{API}/campaigns", headers=headers)).json()["data"]
    assert [len(c["flow"]["steps"]) for c in campaigns] == [2]
