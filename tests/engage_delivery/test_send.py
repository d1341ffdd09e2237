"""sendEngageMessage and its idempotency (contract §6, §7 engage)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func, select

from salesplan.kit.clock import isoformat, utcnow
from salesplan.models.engage import EngageSuppression
from salesplan.models.engage_delivery import EngageMessage, IdempotencyRecord
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_actor, make_key

SEND = "/api/v1/engage/messages/send"


def email(**extra: object) -> dict[str, object]:
    return {"channel": "EMAIL", "to": "ada@example.com", "subject": "Hi", "body": "Hello"} | extra


async def send(
    client: httpx.AsyncClient, actor: Actor, body: dict[str, object], key: str | None = "k-1"
) -> httpx.Response:
    headers = actor.in_org()
    if key is not None:
        headers["Idempotency-Key"] = key
    return await client.post(SEND, json=body, headers=headers)


async def queued(db: object) -> int:
    return int((await db.execute(select(func.count()).select_from(EngageMessage))).scalar_one())  # type: ignore[attr-defined]


async def test_send_queues_the_message_and_answers_202_with_it(client, actor) -> None:
    response = await send(client, actor, email())
    assert response.status_code == 202
    message = response.json()["message"]
    assert message["status"] == "queued"
    assert message["channel"] == "EMAIL"
    assert message["to"] == "ada@example.com"
    assert message["attempts"] == 0
    assert message["messageId"].startswith("<") and message["messageId"].endswith(">")
    item = await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    assert item.status_code == 200
    assert item.json()["id"] == message["id"]


async def test_send_to_a_contact_uses_the_contact_address(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email="grace@example.com")
    body = {"channel": "EMAIL", "contactId": str(contact.id), "subject": "Hi", "body": "Hello"}
    response = await send(client, actor, body)
    assert response.status_code == 202
    assert response.json()["message"]["to"] == "grace@example.com"
    assert response.json()["message"]["contactId"] == str(contact.id)


async def test_send_without_idempotency_key_is_400(client, actor) -> None:
    response = await send(client, actor, email(), key=None)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


async def test_overlong_idempotency_key_is_400(client, actor) -> None:
    response = await send(client, actor, email(), key="x" * 256)
    assert response.status_code == 400


async def test_send_needs_the_engage_send_scope(client, db) -> None:
    reader = await make_actor(db, scopes=["engage:read", "engage:write"])
    response = await send(client, reader, email())
    assert response.status_code == 403
    assert response.json()["error"]["details"]["requiredScope"] == "engage:send"


async def test_same_key_and_body_replays_with_the_replayed_header(client, actor, db) -> None:
    first = await send(client, actor, email())
    second = await send(client, actor, email())
    assert second.status_code == 202
    assert second.headers["Idempotency-Replayed"] == "true"
    assert second.json() == first.json()
    assert "Idempotency-Replayed" not in first.headers
    assert await queued(db) == 1


async def test_same_key_with_another_body_is_payload_mismatch(client, actor, db) -> None:
    await send(client, actor, email())
    response = await send(client, actor, email(body="Something else"))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert response.json()["error"]["details"]["reason"] == "payload_mismatch"
    assert await queued(db) == 1


async def test_same_key_while_the_first_is_in_flight_is_in_flight(client, actor, db) -> None:
    from salesplan.idempotency import fingerprint

    now = utcnow()
    db.add(  # type: ignore[attr-defined]
        IdempotencyRecord(
            organization_id=actor.org.id,
            token_id=await _token_id(db, actor),
            operation="sendEngageMessage",
            key="k-1",
            fingerprint=fingerprint(email()),
            locked_at=now,
            created_at=now,
            expires_at=now + timedelta(hours=24),
        )
    )
    await db.commit()  # type: ignore[attr-defined]
    response = await send(client, actor, email())
    assert response.status_code == 409
    assert response.json()["error"]["details"]["reason"] == "in_flight"
    assert await queued(db) == 0


async def _token_id(db: object, actor: Actor) -> uuid.UUID:
    from salesplan.models.identity import ApiKey

    rows = await db.execute(select(ApiKey.id).where(ApiKey.user_id == actor.user.id))  # type: ignore[attr-defined]
    return rows.scalar_one()


async def test_keys_are_scoped_per_organization(client, actor, db) -> None:
    other = await make_actor(db)
    assert (await send(client, actor, email())).status_code == 202
    response = await send(client, other, email())
    assert response.status_code == 202
    assert "Idempotency-Replayed" not in response.headers
    assert await queued(db) == 2


async def test_keys_are_scoped_per_token(client, actor, db) -> None:
    second_key = await make_key(db, actor.user)
    assert (await send(client, actor, email())).status_code == 202
    other = Actor(actor.org, actor.user, second_key)
    response = await send(client, other, email(body="different body is fine"))
    assert response.status_code == 202
    assert await queued(db) == 2


async def test_a_4xx_answer_is_stored_and_replayed(client, actor, db) -> None:
    body = {"channel": "EMAIL", "contactId": str(uuid.uuid4()), "subject": "Hi", "body": "x"}
    first = await send(client, actor, body)
    assert first.status_code == 422
    assert first.json()["error"]["details"]["field"] == "contactId"
    second = await send(client, actor, body)
    assert second.status_code == 422
    assert second.headers["Idempotency-Replayed"] == "true"
    assert second.json() == first.json()


async def test_a_5xx_releases_the_key(client, actor, db, monkeypatch) -> None:
    from salesplan.engage.delivery import queue

    real = queue.send_message

    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("database went away")

    monkeypatch.setattr(queue, "send_message", broken)
    failed = await send(client, actor, email())
    assert failed.status_code == 500
    assert await queued(db) == 0
    monkeypatch.setattr(queue, "send_message", real)
    retried = await send(client, actor, email())
    assert retried.status_code == 202
    assert "Idempotency-Replayed" not in retried.headers
    assert await queued(db) == 1


async def test_twenty_concurrent_requests_with_one_key_queue_exactly_one_message(
    client, actor, db
) -> None:
    responses = await asyncio.gather(*(send(client, actor, email()) for _ in range(20)))
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {202, 409}
    assert 202 in statuses
    for response in responses:
        if response.status_code == 409:
            assert response.json()["error"]["details"]["reason"] == "in_flight"
    assert await queued(db) == 1


async def test_template_or_draft_sends_are_422_until_rendering_is_wired(client, actor) -> None:
    body = {"channel": "EMAIL", "to": "ada@example.com", "templateId": str(uuid.uuid4())}
    response = await send(client, actor, body)
    assert response.status_code == 422
    assert response.json()["error"]["details"]["field"] == "templateId"


async def test_email_without_subject_is_400(client, actor) -> None:
    response = await send(client, actor, {"channel": "EMAIL", "to": "a@example.com", "body": "x"})
    assert response.status_code == 400


async def test_unknown_property_is_400(client, actor) -> None:
    response = await send(client, actor, email(colour="blue"))
    assert response.status_code == 400


async def test_a_suppressed_address_is_never_sent_to_again(client, actor, db) -> None:
    db.add(
        EngageSuppression(
            organization_id=actor.org.id, email="ada@example.com", reason="unsubscribed"
        )
    )  # type: ignore[attr-defined]
    await db.commit()  # type: ignore[attr-defined]
    response = await send(client, actor, email(to="Ada@Example.com"))
    assert response.status_code == 422
    assert response.json()["error"]["details"]["reason"] == "suppressed"
    assert await queued(db) == 0


async def test_a_future_scheduled_at_schedules_the_message(client, actor) -> None:
    when = utcnow() + timedelta(hours=2)
    response = await send(client, actor, email(scheduledAt=isoformat(when)))
    assert response.status_code == 202
    message = response.json()["message"]
    assert message["status"] == "scheduled"
    assert message["scheduledAt"] is not None


async def test_linkedin_becomes_a_manual_queue_item(client, actor) -> None:
    body = {"channel": "LINKEDIN", "to": "https://www.linkedin.com/in/ada", "body": "Hello"}
    response = await send(client, actor, body)
    assert response.status_code == 202
    assert response.json()["message"]["manual"] is True
    assert response.json()["message"]["status"] == "queued"


@pytest.mark.parametrize("status", ["queued", "sent"])
async def test_queue_filters_by_status(client, actor, status) -> None:
    await send(client, actor, email())
    response = await client.get(f"/api/v1/engage/queue?status={status}", headers=actor.in_org())
    assert response.status_code == 200
    assert response.json()["pagination"]["totalCount"] == (1 if status == "queued" else 0)


async def test_another_organizations_queue_item_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    message = (await send(client, other, email())).json()["message"]
    response = await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    assert response.status_code == 404


TEMPLATES = "/api/v1/engage/templates"


async def test_send_from_a_template_renders_it_for_the_contact(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, first="Grace", email="grace@example.com")
    template = await client.post(
        TEMPLATES,
        json={
            "name": "Intro",
            "channel": "EMAIL",
            "subject": "Hello {{ contact.firstName }}",
            "body": "Dear {{ contact.firstName }} at {{ account.name }}",
        },
        headers=actor.in_org(),
    )
    assert template.status_code == 201
    body = {"channel": "EMAIL", "contactId": str(contact.id), "templateId": template.json()["id"]}
    response = await send(client, actor, body)
    assert response.status_code == 202, response.text
    message = response.json()["message"]
    assert message["subject"] == "Hello Grace"
    assert message["body"] == f"Dear Grace at {account.name}"


async def test_send_from_a_draft_uses_the_draft_text(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, first="Ada", email="ada@example.com")
    draft = await client.post(
        "/api/v1/engage/drafts",
        json={"channel": "EMAIL", "subject": "Note", "body": "Hi {{ contact.firstName }}"},
        headers=actor.in_org(),
    )
    assert draft.status_code == 201, draft.text
    body = {"channel": "EMAIL", "contactId": str(contact.id), "draftId": draft.json()["id"]}
    response = await send(client, actor, body)
    assert response.status_code == 202, response.text
    assert response.json()["message"]["body"] == "Hi Ada"


async def test_send_from_a_template_of_another_channel_is_422(client, actor, db) -> None:
    template = await client.post(
        TEMPLATES,
        json={"name": "Ping", "channel": "SLACK", "body": "Hi"},
        headers=actor.in_org(),
    )
    response = await send(
        client,
        actor,
        {"channel": "EMAIL", "to": "a@example.com", "templateId": template.json()["id"]},
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["field"] == "templateId"


async def test_send_from_a_missing_template_is_422(client, actor) -> None:
    response = await send(
        client, actor, {"channel": "EMAIL", "to": "a@example.com", "templateId": str(uuid.uuid4())}
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["field"] == "templateId"
