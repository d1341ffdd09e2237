"""Campaigns, bulk creation, enrollment jobs and status (contract §7 engage, §11)."""

from __future__ import annotations

from sqlalchemy import func, select

from salesplan.models.engage import EngageEnrollment, EngageSuppression
from tests.engage.helpers import API, bulk_contacts, campaign, email_template, run_worker
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor


async def test_campaign_is_created_draft_with_its_flow(client, actor) -> None:
    created = await campaign(client, actor, "EMAIL", "LINKEDIN")
    assert created["status"] == "draft"
    assert [s["channel"] for s in created["flow"]["steps"]] == ["EMAIL", "LINKEDIN"]
    assert set(created["flow"]["steps"][0]) == {"channel", "templateId", "delayMinutes"}
    got = await client.get(f"{API}/campaigns/{created['id']}", headers=actor.headers)
    assert got.json() == created


async def test_step_template_must_be_of_the_same_channel(client, actor) -> None:
    slack = await email_template(client, actor, channel="SLACK")
    resp = await client.post(
        f"{API}/campaigns",
        json={"name": "C", "flow": {"steps": [{"channel": "EMAIL", "templateId": slack["id"]}]}},
        headers=actor.headers,
    )
    error = assert_envelope(resp, 422, "unprocessable")
    assert error["details"]["field"] == "flow.steps[0].templateId"


async def test_step_template_of_another_organization_is_422(client, actor, db) -> None:
    other = await make_actor(db)
    theirs = await email_template(client, other)
    resp = await client.post(
        f"{API}/campaigns",
        json={"name": "C", "flow": {"steps": [{"channel": "EMAIL", "templateId": theirs["id"]}]}},
        headers=actor.headers,
    )
    assert_envelope(resp, 422, "unprocessable")


async def test_step_fields_are_validated(client, actor) -> None:
    tpl = await email_template(client, actor)
    for step in (
        {"channel": "EMAIL", "templateId": tpl["id"], "delayMinutes": -1},
        {"channel": "FAX", "templateId": tpl["id"]},
        {"channel": "EMAIL"},
        {"channel": "EMAIL", "templateId": tpl["id"], "extra": True},
    ):
        resp = await client.post(
            f"{API}/campaigns", json={"name": "C", "flow": {"steps": [step]}}, headers=actor.headers
        )
        assert_envelope(resp, 400, "validation_error")


async def test_status_moves_only_along_sensible_transitions(client, actor) -> None:
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}"

    async def move(status: str) -> int:
        resp = await client.patch(url, json={"status": status}, headers=actor.headers)
        return resp.status_code

    assert await move("paused") == 422
    assert await move("completed") == 422
    assert await move("active") == 200
    assert await move("draft") == 422
    assert await move("paused") == 200
    assert await move("active") == 200
    assert await move("completed") == 200
    assert await move("active") == 422
    assert await move("paused") == 422


async def test_flow_changes_only_while_draft(client, actor) -> None:
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}"
    resp = await client.patch(url, json={"flow": {"steps": []}}, headers=actor.headers)
    assert resp.status_code == 200 and resp.json()["flow"] == {"steps": []}
    await client.patch(url, json={"status": "active"}, headers=actor.headers)
    resp = await client.patch(url, json={"flow": {"steps": []}}, headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")


async def test_bulk_create_campaigns_answers_207_per_item(client, actor) -> None:
    tpl = await email_template(client, actor)
    slack = await email_template(client, actor, channel="SLACK")
    body = {
        "campaigns": [
            {"name": "A", "flow": {"steps": [{"channel": "EMAIL", "templateId": tpl["id"]}]}},
            {"flow": {"steps": []}},
            {"name": "C", "flow": {"steps": [{"channel": "EMAIL", "templateId": slack["id"]}]}},
            {"name": "D"},
        ]
    }
    resp = await client.post(f"{API}/campaigns/bulk", json=body, headers=actor.headers)
    assert resp.status_code == 207
    data = resp.json()
    assert [r["status"] for r in data["results"]] == [201, 400, 422, 201]
    assert [r["index"] for r in data["results"]] == [0, 1, 2, 3]
    assert data["created"] == 2 and data["failed"] == 2
    assert data["results"][0]["data"]["status"] == "draft"
    assert data["results"][1]["error"]["code"] == "validation_error"
    listed = (await client.get(f"{API}/campaigns", headers=actor.headers)).json()
    assert sorted(c["name"] for c in listed["data"]) == ["A", "D"]


async def test_bulk_create_takes_at_most_100_campaigns(client, actor) -> None:
    body = {"campaigns": [{"name": f"C{i}"} for i in range(101)]}
    resp = await client.post(f"{API}/campaigns/bulk", json=body, headers=actor.headers)
    assert_envelope(resp, 400, "validation_error")
    resp = await client.post(f"{API}/campaigns/bulk", json={"campaigns": []}, headers=actor.headers)
    assert_envelope(resp, 400, "validation_error")


async def test_enrollment_answers_202_with_a_queued_job(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id)
    c = await make_contact(db, acme)
    created = await campaign(client, actor)
    resp = await client.post(
        f"{API}/campaigns/{created['id']}/enrollments",
        json={"contactIds": [str(c.id)]},
        headers=actor.headers,
    )
    assert resp.status_code == 202, resp.text
    job = resp.json()["job"]
    assert job["status"] == "queued"
    assert job["total"] == 1 and job["processed"] == 0 and job["enrolled"] == 0
    got = await client.get(f"{API}/enrollment-jobs/{job['id']}", headers=actor.headers)
    assert got.status_code == 200 and got.json()["id"] == job["id"]


async def test_enrollment_needs_exactly_one_source(client, actor) -> None:
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}/enrollments"
    for body in ({}, {"listId": None}, {"contactIds": []}):
        assert_envelope(await client.post(url, json=body, headers=actor.headers), 400,
                        "validation_error")  # fmt: skip


async def test_enrollment_of_a_missing_list_or_contact_is_422(client, actor, db) -> None:
    other = await make_actor(db)
    theirs, _ = await make_account(db, other.org.id)
    foreign = await make_contact(db, theirs)
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}/enrollments"
    resp = await client.post(url, json={"contactIds": [str(foreign.id)]}, headers=actor.headers)
    assert assert_envelope(resp, 422, "unprocessable")["details"]["field"] == "contactIds"
    resp = await client.post(url, json={"listId": str(foreign.id)}, headers=actor.headers)
    assert assert_envelope(resp, 422, "unprocessable")["details"]["field"] == "listId"


async def test_enrollment_job_runs_and_skips_with_reasons(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 10, without_email=2)
    db.add(EngageSuppression(organization_id=actor.org.id, email="x@y.z", reason="bounced"))
    await db.commit()
    # contact 2 is suppressed (its address, in any case), contact 3 is already enrolled.
    from salesplan.models.crm import Contact

    third = await db.get(Contact, ids[2])
    third.email = "X@y.z"
    await db.commit()
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}/enrollments"
    first = await client.post(url, json={"contactIds": [str(ids[3])]}, headers=actor.headers)
    await run_worker(app)
    resp = await client.post(url, json={"contactIds": [str(i) for i in ids]}, headers=actor.headers)
    job_id = resp.json()["job"]["id"]
    await run_worker(app)
    job = (await client.get(f"{API}/enrollment-jobs/{job_id}", headers=actor.headers)).json()
    assert job["status"] == "completed"
    assert (job["total"], job["processed"], job["enrolled"], job["skipped"]) == (10, 10, 6, 4)
    assert job["skippedReasons"] == {"no_email": 2, "suppressed": 1, "already_enrolled": 1}
    assert job["errors"] == [] and job["completedAt"] is not None
    first_job = first.json()["job"]["id"]
    done = (await client.get(f"{API}/enrollment-jobs/{first_job}", headers=actor.headers)).json()
    assert done["enrolled"] == 1


async def test_no_email_applies_only_to_flows_with_an_email_step(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 3, without_email=3)
    created = await campaign(client, actor, "LINKEDIN")
    resp = await client.post(
        f"{API}/campaigns/{created['id']}/enrollments",
        json={"contactIds": [str(i) for i in ids]},
        headers=actor.headers,
    )
    await run_worker(app)
    job_url = f"{API}/enrollment-jobs/{resp.json()['job']['id']}"
    assert (await client.get(job_url, headers=actor.headers)).json()["enrolled"] == 3


async def test_enrollment_from_a_list_and_campaign_status_counts(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 25)
    lst = await client.post(
        f"{API}/lists", json={"name": "L", "type": "MANUAL"}, headers=actor.headers
    )
    await client.post(
        f"{API}/lists/{lst.json()['id']}/members",
        json={"contactIds": [str(i) for i in ids[:20]]},
        headers=actor.headers,
    )
    created = await campaign(client, actor, "EMAIL", "SLACK")
    resp = await client.post(
        f"{API}/campaigns/{created['id']}/enrollments",
        json={"listId": lst.json()["id"]},
        headers=actor.headers,
    )
    assert resp.json()["job"]["total"] == 20
    await run_worker(app)
    status = (
        await client.get(f"{API}/campaigns/{created['id']}/status", headers=actor.headers)
    ).json()
    assert status["enrolled"] == 20 and status["status"] == "draft"
    assert status["states"] == {"pending": 20}
    assert [s["states"] for s in status["steps"]] == [{"pending": 20}, {}]
    assert [s["channel"] for s in status["steps"]] == ["EMAIL", "SLACK"]


async def test_enrollment_job_of_5000_contacts_completes_with_correct_counts(
    client, actor, db, app
) -> None:
    acme, _ = await make_account(db, actor.org.id)
    await bulk_contacts(db, actor.org.id, acme.id, 5000, without_email=37)
    lst = await client.post(
        f"{API}/lists",
        json={"name": "All", "type": "DYNAMIC", "criteria": {"accountIds": [str(acme.id)]}},
        headers=actor.headers,
    )
    created = await campaign(client, actor)
    resp = await client.post(
        f"{API}/campaigns/{created['id']}/enrollments",
        json={"listId": lst.json()["id"]},
        headers=actor.headers,
    )
    await run_worker(app)
    job = (
        await client.get(f"{API}/enrollment-jobs/{resp.json()['job']['id']}", headers=actor.headers)
    ).json()
    assert job["status"] == "completed"
    assert (job["total"], job["processed"], job["enrolled"], job["skipped"]) == (
        5000,
        5000,
        4963,
        37,
    )
    assert job["skippedReasons"]["no_email"] == 37
    rows = (await db.execute(select(func.count()).select_from(EngageEnrollment))).scalar_one()
    assert rows == 4963


async def test_completed_campaign_takes_no_enrollments(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id)
    c = await make_contact(db, acme)
    created = await campaign(client, actor)
    url = f"{API}/campaigns/{created['id']}"
    await client.patch(url, json={"status": "active"}, headers=actor.headers)
    await client.patch(url, json={"status": "completed"}, headers=actor.headers)
    resp = await client.post(
        f"{url}/enrollments", json={"contactIds": [str(c.id)]}, headers=actor.headers
    )
    assert_envelope(resp, 422, "unprocessable")


async def test_campaign_and_job_of_another_organization_are_404(client, actor, db, app) -> None:
    other = await make_actor(db)
    theirs = await campaign(client, other)
    acme, _ = await make_account(db, other.org.id)
    c = await make_contact(db, acme)
    resp = await client.post(
        f"{API}/campaigns/{theirs['id']}/enrollments",
        json={"contactIds": [str(c.id)]},
        headers=other.headers,
    )
    job_id = resp.json()["job"]["id"]
    for path in (f"/campaigns/{theirs['id']}", f"/campaigns/{theirs['id']}/status",
                 f"/enrollment-jobs/{job_id}"):  # fmt: skip
        assert_envelope(await client.get(API + path, headers=actor.headers), 404, "not_found")
