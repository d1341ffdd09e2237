"""Leads: shapes, status enum, archive, crmId."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope

LEAD_KEYS = {
    "id",
    "firstName",
    "lastName",
    "fullName",
    "email",
    "company",
    "title",
    "status",
    "source",
    "crmId",
    "archivedAt",
    "createdAt",
    "updatedAt",
}


async def test_create_lead_answers_201_with_status_new(client, actor) -> None:
    resp = await client.post(
        "/api/v1/leads",
        json={"firstName": "Lin", "lastName": "Ma", "email": "lin@co.io", "company": "Co"},
        headers=actor.headers,
    )
    assert resp.status_code == 201
    data = resp.json()
    assert set(data) == LEAD_KEYS
    assert data["status"] == "new"
    assert data["fullName"] == "Lin Ma"


async def test_lead_status_and_email_are_validated(client, actor) -> None:
    for body in ({"status": "hot"}, {"email": "x"}, {"extra": 1}):
        resp = await client.post("/api/v1/leads", json=body, headers=actor.headers)
        assert_envelope(resp, 400, "validation_error")


async def test_update_lead_changes_only_sent_fields(client, actor) -> None:
    lead = (
        await client.post("/api/v1/leads", json={"company": "Co"}, headers=actor.headers)
    ).json()
    resp = await client.patch(
        f"/api/v1/leads/{lead['id']}", json={"status": "qualified"}, headers=actor.headers
    )
    assert resp.json()["status"] == "qualified"
    assert resp.json()["company"] == "Co"


async def test_delete_archives_the_lead(client, actor) -> None:
    lead = (await client.post("/api/v1/leads", json={}, headers=actor.headers)).json()
    url = f"/api/v1/leads/{lead['id']}"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    assert (await client.get("/api/v1/leads", headers=actor.headers)).json()["data"] == []


async def test_lead_search_and_status_filter(client, actor) -> None:
    await client.post(
        "/api/v1/leads", json={"company": "Umbrella", "status": "working"}, headers=actor.headers
    )
    await client.post("/api/v1/leads", json={"email": "x@umbrella.io"}, headers=actor.headers)
    await client.post("/api/v1/leads", json={"company": "Other"}, headers=actor.headers)
    resp = await client.get("/api/v1/leads", params={"search": "UMBRELLA"}, headers=actor.headers)
    assert len(resp.json()["data"]) == 2
    resp = await client.get("/api/v1/leads", params={"status": "working"}, headers=actor.headers)
    assert [x["company"] for x in resp.json()["data"]] == ["Umbrella"]


async def test_duplicate_lead_crm_id_is_409(client, actor) -> None:
    assert (
        await client.post("/api/v1/leads", json={"crmId": "L"}, headers=actor.headers)
    ).status_code == 201
    resp = await client.post("/api/v1/leads", json={"crmId": "L"}, headers=actor.headers)
    assert_envelope(resp, 409, "conflict")
