"""startEngageCampaign and the campaign's steps (contract §6, §7 engage, §11 "Engage states"):
the start's answer and idempotency, first steps queued and delivered over real SMTP, later steps
at sent + delayMinutes, a reply stopping the sequence, skips, pause and resume, completion."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import select, update

from salesplan.engage.delivery.campaign_runs import run_campaign_steps
from salesplan.engage.delivery.worker import run_delivery
from salesplan.engage.enrollment import run_enrollment_jobs
from salesplan.jobs.loop import drain
from salesplan.models.crm import Contact
from salesplan.models.engage import EngageEnrollment, EngageSuppression
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import SmtpSink, worker_context
from tests.engage_delivery.test_tracking_inbound import post_inbound, reply_to, secret_of
from tests.engage_delivery.test_worker import make_due
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_actor, make_key

API = "/api/v1/engage"


async def make_campaign(
    client: httpx.AsyncClient, actor: Actor, *steps: tuple[str, int]
) -> dict[str, Any]:
    """A draft campaign with one template per (channel, delayMinutes) step."""
    flow = []
    for index, (channel, delay) in enumerate(steps):
        template: dict[str, Any] = {
            "name": f"Step {index}",
            "channel": channel,
            "body": f"Step {index} for {{{{ contact.firstName }}}}",
        }
        if channel == "EMAIL":
            template["subject"] = f"Step {index}: hello {{{{ contact.firstName }}}}"
        created = await client.post(f"{API}/templates", json=template, headers=actor.in_org())
        assert created.status_code == 201, created.text
        flow.append({"channel": channel, "templateId": created.json()["id"], "delayMinutes": delay})
    response = await client.post(
        f"{API}/campaigns", json={"name": "Launch", "flow": {"steps": flow}}, headers=actor.in_org()
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def enroll(app: Any, client: httpx.AsyncClient, actor: Actor, campaign: dict, ids: list):
    response = await client.post(
        f"{API}/campaigns/{campaign['id']}/enrollments",
        json={"contactIds": [str(i) for i in ids]},
        headers=actor.in_org(),
    )
    assert response.status_code == 202, response.text
    await drain(worker_context(app), [run_enrollment_jobs])


async def start(
    client: httpx.AsyncClient, actor: Actor, campaign_id: str, key: str | None = "start-1"
) -> httpx.Response:
    headers = actor.in_org()
    if key is not None:
        headers["Idempotency-Key"] = key
    return await client.post(f"{API}/campaigns/{campaign_id}/start", headers=headers)


async def contacts(db: Any, actor: Actor, *firsts: str) -> list[Contact]:
    account, _ = await make_account(db, actor.org.id)
    return [
        await make_contact(db, account, first=f, email=f"{f.lower()}@example.com") for f in firsts
    ]


async def queue(client: httpx.AsyncClient, actor: Actor, campaign_id: str) -> list[dict]:
    response = await client.get(
        f"{API}/queue?campaignId={campaign_id}&limit=200&sortBy=createdAt", headers=actor.in_org()
    )
    assert response.status_code == 200
    return list(response.json()["data"])


async def enrollment(db: Any, campaign_id: str, contact_id: uuid.UUID) -> EngageEnrollment:
    stmt = (
        select(EngageEnrollment)
        .where(
            EngageEnrollment.campaign_id == uuid.UUID(campaign_id),
            EngageEnrollment.contact_id == contact_id,
        )
        .execution_options(populate_existing=True)
    )
    return (await db.execute(stmt)).scalar_one()


async def work(app: Any, smtp: SmtpSink) -> None:
    """The worker's delivery and campaign kinds until nothing is due."""
    await drain(worker_context(app, smtp), [run_delivery, run_campaign_steps])


async def status_of(client: httpx.AsyncClient, actor: Actor, campaign_id: str) -> dict:
    response = await client.get(f"{API}/campaigns/{campaign_id}/status", headers=actor.in_org())
    assert response.status_code == 200
    return dict(response.json())


async def test_start_activates_and_queues_each_enrolled_contacts_first_step(
    app, client, actor, db, smtp
) -> None:
    people = await contacts(db, actor, "Ada", "Grace")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 60))
    await enroll(app, client, actor, campaign, [c.id for c in people])

    response = await start(client, actor, campaign["id"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["started"] == 2
    assert body["campaign"]["id"] == campaign["id"]
    assert body["campaign"]["status"] == "active"
    assert body["campaign"]["startedAt"] is not None
    assert body["skipped"] == {"no_email": 0, "suppressed": 0}
    items = await queue(client, actor, campaign["id"])
    assert sorted(i["to"] for i in items) == ["ada@example.com", "grace@example.com"]
    assert {i["status"] for i in items} == {"queued"}
    assert {i["subject"] for i in items} == {"Step 0: hello Ada", "Step 0: hello Grace"}
    status = await status_of(client, actor, campaign["id"])
    assert status["status"] == "active"
    assert status["states"] == {"scheduled": 2}
    assert status["steps"][0]["states"] == {"scheduled": 2}

    await drain(worker_context(app, smtp), [run_delivery])
    assert sorted(str(m["To"]) for m in smtp.received) == ["ada@example.com", "grace@example.com"]
    assert {str(m["Subject"]) for m in smtp.received} == {
        "Step 0: hello Ada",
        "Step 0: hello Grace",
    }
    ids = {i["messageId"] for i in items}
    assert {str(m["Message-ID"]) for m in smtp.received} == ids


async def test_start_replays_with_the_same_key_and_queues_nothing_again(
    app, client, actor, db
) -> None:
    people = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [people[0].id])
    first = await start(client, actor, campaign["id"])
    second = await start(client, actor, campaign["id"])
    assert first.status_code == second.status_code == 200
    assert "Idempotency-Replayed" not in first.headers
    assert second.headers["Idempotency-Replayed"] == "true"
    assert second.json() == first.json()
    assert len(await queue(client, actor, campaign["id"])) == 1


async def test_same_key_for_another_campaign_is_payload_mismatch(client, actor) -> None:
    one = await make_campaign(client, actor, ("EMAIL", 0))
    two = await make_campaign(client, actor, ("EMAIL", 0))
    assert (await start(client, actor, one["id"])).status_code == 200
    response = await start(client, actor, two["id"])
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert response.json()["error"]["details"]["reason"] == "payload_mismatch"
    got = await client.get(f"{API}/campaigns/{two['id']}", headers=actor.in_org())
    assert got.json()["status"] == "draft"


async def test_start_without_idempotency_key_is_400(client, actor) -> None:
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    response = await start(client, actor, campaign["id"], key=None)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    got = await client.get(f"{API}/campaigns/{campaign['id']}", headers=actor.in_org())
    assert got.json()["status"] == "draft"


async def test_start_needs_the_engage_send_scope(client, actor, db) -> None:
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    key = await make_key(db, actor.user, scopes=["engage:read", "engage:write"])
    writer = Actor(actor.org, actor.user, key)
    response = await start(client, writer, campaign["id"])
    assert response.status_code == 403
    assert response.json()["error"]["details"]["requiredScope"] == "engage:send"


async def test_another_organizations_campaign_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    campaign = await make_campaign(client, other, ("EMAIL", 0))
    response = await start(client, actor, campaign["id"])
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    got = await client.get(f"{API}/campaigns/{campaign['id']}", headers=other.in_org())
    assert got.json()["status"] == "draft"


async def test_start_is_rest_only_and_counts_in_engage_send(app) -> None:
    spec = app.openapi()
    operation = spec["paths"]["/api/v1/engage/campaigns/{campaignId}/start"]["post"]
    assert operation["operationId"] == "startEngageCampaign"
    assert operation["x-scopes"] == ["engage:send"]
    assert operation["x-rate-limit-group"] == "engage_send"
    assert {"409", "422"} <= set(operation["responses"])


async def test_already_started_is_409_completed_is_422_and_no_steps_starts_nothing(
    client, actor
) -> None:
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    assert (await start(client, actor, campaign["id"], key="a")).status_code == 200
    again = await start(client, actor, campaign["id"], key="b")
    assert again.status_code == 409
    assert again.json()["error"]["details"]["reason"] == "already_started"

    url = f"{API}/campaigns/{campaign['id']}"
    paused = await client.patch(url, json={"status": "paused"}, headers=actor.in_org())
    assert paused.status_code == 200
    on_paused = await start(client, actor, campaign["id"], key="c")
    assert on_paused.status_code == 409
    assert on_paused.json()["error"]["details"]["status"] == "paused"

    done = await client.patch(url, json={"status": "completed"}, headers=actor.in_org())
    assert done.status_code == 200
    on_completed = await start(client, actor, campaign["id"], key="d")
    assert on_completed.status_code == 422
    assert on_completed.json()["error"]["details"]["reason"] == "campaign_completed"

    empty = await make_campaign(client, actor)
    no_steps = await start(client, actor, empty["id"], key="e")
    assert no_steps.status_code == 200
    assert no_steps.json()["started"] == 0
    assert no_steps.json()["campaign"]["status"] == "active"


async def test_a_draft_activated_by_patch_sends_nothing_until_started(
    app, client, actor, db, smtp
) -> None:
    people = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [people[0].id])
    url = f"{API}/campaigns/{campaign['id']}"
    assert (
        await client.patch(url, json={"status": "active"}, headers=actor.in_org())
    ).status_code == 200
    await work(app, smtp)
    assert smtp.received == []
    response = await start(client, actor, campaign["id"])
    assert response.status_code == 200
    assert response.json()["started"] == 1


async def test_suppressed_and_addressless_contacts_are_skipped_with_the_reason(
    app, client, actor, db, smtp
) -> None:
    ada, grace, alan = await contacts(db, actor, "Ada", "Grace", "Alan")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id, grace.id, alan.id])
    # Since enrolling: Grace unsubscribed elsewhere, Alan's address was removed.
    db.add(EngageSuppression(organization_id=actor.org.id, email="grace@example.com", reason="x"))
    await db.execute(update(Contact).where(Contact.id == alan.id).values(email=None))
    await db.commit()

    response = await start(client, actor, campaign["id"])
    assert response.status_code == 200
    assert response.json()["started"] == 1
    assert response.json()["skipped"] == {"no_email": 1, "suppressed": 1}
    assert (await enrollment(db, campaign["id"], grace.id)).state == "skipped"
    assert (await enrollment(db, campaign["id"], grace.id)).reason == "suppressed"
    assert (await enrollment(db, campaign["id"], alan.id)).reason == "no_email"
    assert [i["to"] for i in await queue(client, actor, campaign["id"])] == ["ada@example.com"]
    status = await status_of(client, actor, campaign["id"])
    assert status["states"] == {"scheduled": 1, "skipped": 2}
    await work(app, smtp)
    assert [str(m["To"]) for m in smtp.received] == ["ada@example.com"]


async def test_enrollment_job_skips_are_reported_on_the_job(app, client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    ada = await make_contact(db, account, first="Ada", email="ada@example.com")
    nobody = await make_contact(db, account, first="No", email=None)
    db.add(EngageSuppression(organization_id=actor.org.id, email="ada@example.com", reason="x"))
    await db.commit()
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    response = await client.post(
        f"{API}/campaigns/{campaign['id']}/enrollments",
        json={"contactIds": [str(ada.id), str(nobody.id)]},
        headers=actor.in_org(),
    )
    job_id = response.json()["job"]["id"]
    await drain(worker_context(app), [run_enrollment_jobs])
    job = (await client.get(f"{API}/enrollment-jobs/{job_id}", headers=actor.in_org())).json()
    assert job["skipped"] == 2
    assert job["skippedReasons"]["no_email"] == 1
    assert job["skippedReasons"]["suppressed"] == 1


async def test_the_next_step_follows_delay_minutes_after_the_previous_send(
    app, client, actor, db, smtp
) -> None:
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 90))
    await enroll(app, client, actor, campaign, [ada.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1

    await work(app, smtp)
    assert len(smtp.received) == 1
    items = {i["subject"]: i for i in await queue(client, actor, campaign["id"])}
    first, second = items["Step 0: hello Ada"], items["Step 1: hello Ada"]
    assert first["status"] == "sent"
    assert second["status"] == "scheduled"
    sent_at = (
        await db.execute(
            select(EngageMessage.sent_at).where(EngageMessage.id == uuid.UUID(first["id"]))
        )
    ).scalar_one()
    scheduled_at = (
        await db.execute(
            select(EngageMessage.scheduled_at).where(EngageMessage.id == uuid.UUID(second["id"]))
        )
    ).scalar_one()
    assert scheduled_at == sent_at + timedelta(minutes=90)
    row = await enrollment(db, campaign["id"], ada.id)
    assert (row.state, row.current_step, row.next_run_at) == ("scheduled", 1, scheduled_at)
    status = await status_of(client, actor, campaign["id"])
    assert status["steps"][1]["states"] == {"scheduled": 1}

    await make_due(db)  # 90 minutes pass
    await work(app, smtp)
    assert [str(m["Subject"]) for m in smtp.received] == [
        "Step 0: hello Ada",
        "Step 1: hello Ada",
    ]
    row = await enrollment(db, campaign["id"], ada.id)
    assert row.state == "completed"
    status = await status_of(client, actor, campaign["id"])
    assert status["status"] == "completed"
    assert status["states"] == {"completed": 1}
    assert status["steps"][1]["states"] == {"completed": 1}
    got = await client.get(f"{API}/campaigns/{campaign['id']}", headers=actor.in_org())
    assert got.json()["status"] == "completed"


async def test_a_reply_stops_the_contacts_remaining_steps(app, client, actor, db, smtp) -> None:
    ada, grace = await contacts(db, actor, "Ada", "Grace")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 60), ("EMAIL", 60))
    await enroll(app, client, actor, campaign, [ada.id, grace.id])
    await start(client, actor, campaign["id"])
    await work(app, smtp)
    items = await queue(client, actor, campaign["id"])
    ada_first = next(i for i in items if i["to"] == "ada@example.com" and i["status"] == "sent")

    secret = await secret_of(app, db, actor)
    reply = await post_inbound(client, actor.org.id, reply_to(ada_first["messageId"]), secret)
    assert reply.status_code == 202
    row = await enrollment(db, campaign["id"], ada.id)
    assert row.state == "replied"
    ada_items = [
        i for i in await queue(client, actor, campaign["id"]) if i["contactId"] == str(ada.id)
    ]
    assert sorted(i["status"] for i in ada_items) == ["cancelled", "sent"]

    for _ in range(2):  # the rest of the sequence plays out for Grace, not for Ada
        await make_due(db)
        await work(app, smtp)
    to = [str(m["To"]) for m in smtp.received]
    assert to.count("ada@example.com") == 1
    assert to.count("grace@example.com") == 3
    ada_items = [
        i for i in await queue(client, actor, campaign["id"]) if i["contactId"] == str(ada.id)
    ]
    assert len(ada_items) == 2  # no further outbox rows for Ada
    status = await status_of(client, actor, campaign["id"])
    assert status["states"] == {"replied": 1, "completed": 1}
    assert status["status"] == "completed"


async def test_a_reply_before_the_next_step_is_scheduled_stops_it_too(
    app, client, actor, db, smtp
) -> None:
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id])
    await start(client, actor, campaign["id"])
    await drain(worker_context(app, smtp), [run_delivery])  # sent; next step not scheduled yet
    assert (await enrollment(db, campaign["id"], ada.id)).state == "sent"
    (item,) = await queue(client, actor, campaign["id"])
    secret = await secret_of(app, db, actor)
    await post_inbound(client, actor.org.id, reply_to(item["messageId"]), secret)
    await work(app, smtp)
    assert len(smtp.received) == 1
    assert len(await queue(client, actor, campaign["id"])) == 1
    assert (await enrollment(db, campaign["id"], ada.id)).state == "replied"


async def test_pausing_holds_the_steps_and_resuming_continues(app, client, actor, db, smtp) -> None:
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id])
    await start(client, actor, campaign["id"])
    url = f"{API}/campaigns/{campaign['id']}"

    await client.patch(url, json={"status": "paused"}, headers=actor.in_org())
    await work(app, smtp)
    assert smtp.received == []  # the queued first step is held
    (held,) = await queue(client, actor, campaign["id"])
    assert held["status"] == "queued"

    await client.patch(url, json={"status": "active"}, headers=actor.in_org())
    await drain(worker_context(app, smtp), [run_delivery])
    assert len(smtp.received) == 1
    await client.patch(url, json={"status": "paused"}, headers=actor.in_org())
    await work(app, smtp)
    assert len(await queue(client, actor, campaign["id"])) == 1  # no next step while paused
    assert (await enrollment(db, campaign["id"], ada.id)).state == "sent"

    await client.patch(url, json={"status": "active"}, headers=actor.in_org())
    await work(app, smtp)
    assert len(smtp.received) == 2
    assert (await enrollment(db, campaign["id"], ada.id)).state == "completed"


async def test_contacts_enrolled_after_the_start_get_their_first_step(
    app, client, actor, db, smtp
) -> None:
    ada, grace = await contacts(db, actor, "Ada", "Grace")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 60))
    await enroll(app, client, actor, campaign, [ada.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1
    await enroll(app, client, actor, campaign, [grace.id])
    await work(app, smtp)
    assert sorted(str(m["To"]) for m in smtp.received) == ["ada@example.com", "grace@example.com"]
    assert (await enrollment(db, campaign["id"], grace.id)).state == "scheduled"
    assert (await enrollment(db, campaign["id"], grace.id)).current_step == 1


async def test_a_hard_bounce_stops_the_sequence(app, client, actor, db, smtp) -> None:
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 60))
    await enroll(app, client, actor, campaign, [ada.id])
    await start(client, actor, campaign["id"])
    await work(app, smtp)
    from salesplan.engage.delivery.inbound import suppress

    await suppress(db, actor.org.id, "Ada@Example.com", "hard_bounce")
    await db.commit()
    row = await enrollment(db, campaign["id"], ada.id)
    assert (row.state, row.reason) == ("stopped", "hard_bounce")
    statuses = sorted(i["status"] for i in await queue(client, actor, campaign["id"]))
    assert statuses == ["cancelled", "sent"]


async def test_a_linkedin_step_is_a_manual_item_and_the_sequence_goes_on(
    app, client, actor, db, smtp
) -> None:
    account, _ = await make_account(db, actor.org.id)
    ada = await make_contact(
        db, account, first="Ada", email="ada@example.com", linkedin_url="https://linkedin.com/in/a"
    )
    campaign = await make_campaign(client, actor, ("LINKEDIN", 0), ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1
    await work(app, smtp)
    items = {i["channel"]: i for i in await queue(client, actor, campaign["id"])}
    assert items["LINKEDIN"]["manual"] is True
    assert items["LINKEDIN"]["to"] == "https://linkedin.com/in/a"
    assert items["EMAIL"]["status"] == "sent"
    assert len(smtp.received) == 1


async def test_concurrent_starts_with_one_key_schedule_the_first_steps_once(
    app, client, actor, db
) -> None:
    people = await contacts(db, actor, "Ada", "Grace")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [p.id for p in people])
    responses = await asyncio.gather(*(start(client, actor, campaign["id"]) for _ in range(10)))
    statuses = [r.status_code for r in responses]
    assert set(statuses) <= {200, 409}
    assert 200 in statuses
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["details"]["reason"] == "in_flight"
    assert len(await queue(client, actor, campaign["id"])) == 2


async def test_a_message_that_fails_for_good_stops_the_sequence(
    app, client, actor, db, smtp
) -> None:
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id])
    await start(client, actor, campaign["id"])
    smtp.refusals = ["550 5.1.1 no such user"]
    await work(app, smtp)
    (item,) = await queue(client, actor, campaign["id"])
    assert item["status"] == "failed"
    row = await enrollment(db, campaign["id"], ada.id)
    assert (row.state, row.reason) == ("stopped", "failed")
    assert smtp.received == []


async def test_a_suppression_cancels_a_scheduled_send_to_the_address(client, actor, db) -> None:
    from salesplan.engage.delivery.inbound import suppress
    from tests.engage_delivery.test_send import email, send

    when = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    message = (await send(client, actor, email(scheduledAt=when))).json()["message"]
    await suppress(db, actor.org.id, "ada@example.com", "unsubscribed")
    await db.commit()
    item = await client.get(f"{API}/queue/{message['id']}", headers=actor.in_org())
    assert item.json()["status"] == "cancelled"
