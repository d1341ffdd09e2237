"""The delivery job kind against real servers: aiosmtpd and a local HTTP webhook."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from salesplan.engage.delivery.integrations import set_integration
from salesplan.engage.delivery.worker import MAX_ATTEMPTS, run_delivery
from salesplan.kit.clock import isoformat, utcnow
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send


async def make_due(db: object) -> None:
    """Time passes: every waiting message is due now."""
    await db.execute(  # type: ignore[attr-defined]
        update(EngageMessage)
        .where(EngageMessage.next_attempt_at.is_not(None))
        .values(next_attempt_at=utcnow() - timedelta(seconds=1))
    )
    await db.commit()  # type: ignore[attr-defined]


async def item(client, actor, message_id: str) -> dict:
    return (await client.get(f"/api/v1/engage/queue/{message_id}", headers=actor.in_org())).json()


async def test_worker_sends_email_with_text_html_and_one_click_unsubscribe(
    app, client, actor, smtp
) -> None:
    body = email(
        body="Hello Ada\n\nSee https://example.com",
        bodyHtml='<p><a href="https://example.com/x">x</a></p>',
    )
    message = (await send(client, actor, body)).json()["message"]
    assert await run_delivery(worker_context(app, smtp)) == 1
    assert len(smtp.received) == 1
    mail = smtp.received[0]
    assert mail["Message-ID"] == message["messageId"]
    assert mail["To"] == "ada@example.com"
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert mail["List-Unsubscribe"].startswith("<http://testserver/t/u/")
    assert mail.get_body(("plain",)).get_content().startswith("Hello Ada")
    html = mail.get_body(("html",)).get_content()
    assert "/t/o/" in html and "/t/c/" in html
    assert 'href="https://example.com/x"' not in html
    after = await item(client, actor, message["id"])
    assert after["status"] == "sent"
    assert after["sentAt"] is not None
    assert after["attempts"] == 1


async def test_nothing_due_returns_zero(app, smtp) -> None:
    assert await run_delivery(worker_context(app, smtp)) == 0


async def test_scheduled_message_waits_for_its_time(app, client, actor, smtp, db) -> None:
    when = isoformat(utcnow() + timedelta(hours=1))
    message = (await send(client, actor, email(scheduledAt=when))).json()["message"]
    assert await run_delivery(worker_context(app, smtp)) == 0
    await make_due(db)
    assert await run_delivery(worker_context(app, smtp)) == 1
    assert (await item(client, actor, message["id"]))["status"] == "sent"


async def test_temporary_failure_retries_with_the_same_message_id(
    app, client, actor, smtp, db
) -> None:
    smtp.refusals = ["450 4.2.0 mailbox busy"]
    message = (await send(client, actor, email())).json()["message"]
    await run_delivery(worker_context(app, smtp))
    waiting = await item(client, actor, message["id"])
    assert waiting["status"] == "queued"
    assert "450" in waiting["lastError"]
    row = (await db.execute(select(EngageMessage.next_attempt_at))).scalar_one()  # type: ignore[attr-defined]
    assert row > utcnow()  # backed off, not retried at once
    await make_due(db)
    await run_delivery(worker_context(app, smtp))
    assert len(smtp.received) == 1
    assert smtp.received[0]["Message-ID"] == message["messageId"]
    done = await item(client, actor, message["id"])
    assert done["status"] == "sent"
    assert done["attempts"] == 2
    assert done["lastError"] is None


async def test_retries_end_in_failed_with_last_error(app, client, actor, smtp, db) -> None:
    smtp.refusals = ["450 4.2.0 mailbox busy"] * MAX_ATTEMPTS
    message = (await send(client, actor, email())).json()["message"]
    for _ in range(MAX_ATTEMPTS):
        await make_due(db)
        await run_delivery(worker_context(app, smtp))
    failed = await item(client, actor, message["id"])
    assert failed["status"] == "failed"
    assert failed["attempts"] == MAX_ATTEMPTS
    assert "450" in failed["lastError"]
    assert smtp.received == []


async def test_permanent_refusal_fails_at_once(app, client, actor, smtp) -> None:
    smtp.refusals = ["554 5.7.1 rejected"]
    message = (await send(client, actor, email())).json()["message"]
    await run_delivery(worker_context(app, smtp))
    failed = await item(client, actor, message["id"])
    assert failed["status"] == "failed"
    assert "554" in failed["lastError"]


async def test_throttled_relay_pauses_the_sender(app, client, actor, smtp, db) -> None:
    smtp.refusals = ["421 4.7.0 slow down"]
    message = (await send(client, actor, email())).json()["message"]
    await run_delivery(worker_context(app, smtp))
    waiting = await item(client, actor, message["id"])
    assert waiting["status"] == "queued"
    assert waiting["attempts"] == 0

    immediate = await send(client, actor, email(body="another"), key="k-2")
    assert immediate.status_code == 429
    error = immediate.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert error["details"]["retryAt"].endswith("Z")
    assert "Retry-After" in immediate.headers

    later = isoformat(utcnow() + timedelta(hours=1))
    scheduled = await send(client, actor, email(body="later", scheduledAt=later), key="k-3")
    assert scheduled.status_code == 202

    # While paused the worker leaves e-mail alone, even when a message is due.
    await db.execute(update(EngageMessage).values(next_attempt_at=utcnow() - timedelta(seconds=1)))  # type: ignore[attr-defined]
    await db.commit()  # type: ignore[attr-defined]
    assert await run_delivery(worker_context(app, smtp)) == 0
    assert smtp.received == []


async def test_a_throttled_429_is_not_stored_for_the_key(app, client, actor, smtp, db) -> None:
    from salesplan.models.engage_delivery import SenderPause

    db.add(SenderPause(sender="smtp", paused_until=utcnow() + timedelta(minutes=5)))  # type: ignore[attr-defined]
    await db.commit()  # type: ignore[attr-defined]
    assert (await send(client, actor, email())).status_code == 429
    await db.execute(update(SenderPause).values(paused_until=utcnow() - timedelta(seconds=1)))  # type: ignore[attr-defined]
    await db.commit()  # type: ignore[attr-defined]
    again = await send(client, actor, email())
    assert again.status_code == 202
    assert "Idempotency-Replayed" not in again.headers


async def test_email_stays_queued_without_a_relay(app, client, actor) -> None:
    message = (await send(client, actor, email())).json()["message"]
    assert await run_delivery(worker_context(app)) == 0
    assert (await item(client, actor, message["id"]))["status"] == "queued"


async def test_slack_message_posts_to_the_organization_webhook(
    app, client, actor, db, slack_webhook
) -> None:
    await set_integration(db, app.state.settings, actor.org.id, slack_webhook_url=slack_webhook.url)  # type: ignore[arg-type]
    await db.commit()  # type: ignore[attr-defined]
    body = {"channel": "SLACK", "to": "#deals", "subject": "Update", "body": "Signed!"}
    message = (await send(client, actor, body)).json()["message"]
    assert await run_delivery(worker_context(app)) == 1
    assert slack_webhook.posts == [{"text": "*Update*\nSigned!"}]
    assert (await item(client, actor, message["id"]))["status"] == "sent"


async def test_slack_429_pauses_that_organization_webhook(
    app, client, actor, db, slack_webhook
) -> None:
    await set_integration(db, app.state.settings, actor.org.id, slack_webhook_url=slack_webhook.url)  # type: ignore[arg-type]
    await db.commit()  # type: ignore[attr-defined]
    slack_webhook.answers = [(429, {"Retry-After": "120"})]
    body = {"channel": "SLACK", "to": "#deals", "body": "Signed!"}
    await send(client, actor, body)
    await run_delivery(worker_context(app))
    again = await send(client, actor, body | {"body": "again"}, key="k-2")
    assert again.status_code == 429
    assert "retryAt" in again.json()["error"]["details"]


async def test_linkedin_items_are_never_claimed(app, client, actor, smtp) -> None:
    body = {"channel": "LINKEDIN", "to": "https://www.linkedin.com/in/ada", "body": "Hello"}
    await send(client, actor, body)
    assert await run_delivery(worker_context(app, smtp)) == 0


async def test_delivery_is_registered_as_a_job_kind() -> None:
    from salesplan.jobs.kinds import job_kinds

    assert run_delivery in job_kinds()


async def test_worker_prunes_expired_idempotency_keys(app, client, actor, db) -> None:
    from salesplan.jobs.kinds import job_kinds
    from salesplan.jobs.pruning import Periodic
    from salesplan.models.engage_delivery import IdempotencyRecord

    await send(client, actor, email())
    await db.execute(  # type: ignore[attr-defined]
        update(IdempotencyRecord).values(expires_at=utcnow() - timedelta(seconds=1))
    )
    await db.commit()  # type: ignore[attr-defined]
    # Its own job kind, which prunes on its first call in a loop.
    pruning = next(
        k
        for k in job_kinds()
        if isinstance(k, Periodic) and k.__name__ == "run_idempotency_pruning"
    )
    await pruning(worker_context(app))
    remaining = (await db.execute(select(IdempotencyRecord))).scalars().all()  # type: ignore[attr-defined]
    assert remaining == []
    # The key is free again: the same key with another body is a new send.
    again = await send(client, actor, email(body="a new message"))
    assert again.status_code == 202
    assert "Idempotency-Replayed" not in again.headers


async def test_slack_send_without_a_webhook_is_422(client, actor) -> None:
    body = {"channel": "SLACK", "to": "#deals", "body": "Signed!"}
    response = await send(client, actor, body)
    assert response.status_code == 422
    assert response.json()["error"]["details"]["reason"] == "slack_not_configured"
