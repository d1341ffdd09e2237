"""Contract §12 "Inbound mail" and "failures stay local": what one signed inbound e-mail may do
to the organization and to everyone else."""

from __future__ import annotations

from salesplan.engage.delivery.worker import run_delivery
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send
from tests.engage_delivery.test_tracking_inbound import (
    delivered,
    post_inbound,
    reply_to,
    secret_of,
)
from tests.fixtures.factories import make_actor


async def test_a_mail_with_40000_references_is_taken_and_nobody_gets_503(
    app, client, actor, db, smtp
) -> None:
    other = await make_actor(db)
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    ids = " ".join(f"<ref-{i}@spam.example>" for i in range(40_000))
    raw = reply_to(message["messageId"]).replace(
        f"References: {message['messageId']}".encode(),
        f"References: {ids} {message['messageId']}".encode(),
    )
    response = await post_inbound(client, actor.org.id, raw, secret)
    assert response.status_code == 202, response.text
    # Threaded by the newest reference (and In-Reply-To): the reply belongs to the message.
    replies = (await client.get("/api/v1/engage/replies", headers=actor.in_org())).json()
    assert [r["messageId"] for r in replies["data"]] == [message["id"]]
    # Another organization's request right after is served.
    for _ in range(3):
        accounts = await client.get("/api/v1/accounts", headers=other.in_org())
        assert accounts.status_code == 200, accounts.text


def forged_dsn(message_id: str, *recipients: str) -> bytes:
    """A failure report naming `message_id`, with one status block per listed recipient."""
    blocks = []
    for recipient in recipients:
        blocks += [
            f"Final-Recipient: rfc822; {recipient}",
            "Action: failed",
            "Status: 5.1.1",
            "Diagnostic-Code: smtp; 550 5.1.1 user unknown",
            "",
        ]
    parts = [
        "From: MAILER-DAEMON@mx.example.com",
        "To: sales@example.com",
        "Subject: Delivery Status Notification",
        "MIME-Version: 1.0",
        'Content-Type: multipart/report; report-type=delivery-status; boundary="r1"',
        "",
        "--r1",
        "Content-Type: message/delivery-status",
        "",
        "Reporting-MTA: dns; mx.example.com",
        "",
        *blocks,
        "--r1",
        "Content-Type: text/rfc822-headers",
        "",
        f"Message-ID: {message_id}",
        "",
        "--r1--",
        "",
    ]
    return "\r\n".join(parts).encode()


async def suppressed(db, org_id) -> set[str]:
    from sqlalchemy import select

    from salesplan.models.engage import EngageSuppression

    stmt = select(EngageSuppression.email).where(EngageSuppression.organization_id == org_id)
    return set((await db.execute(stmt)).scalars())


async def test_a_forged_dsn_suppresses_only_the_named_messages_recipient(
    app, client, actor, db, smtp
) -> None:
    secret = await secret_of(app, db, actor)
    named, _ = await delivered(app, client, actor, smtp)  # to ada@example.com
    kept = (await send(client, actor, email(to="grace@example.com"), key="k-2")).json()["message"]
    await run_delivery(worker_context(app, smtp))
    raw = forged_dsn(named["messageId"], "grace@example.com", "ceo@victim.example")
    response = await post_inbound(client, actor.org.id, raw, secret)
    assert response.status_code == 202, response.text
    assert await suppressed(db, actor.org.id) == {"ada@example.com"}
    queue = "/api/v1/engage/queue/"
    assert (await client.get(queue + named["id"], headers=actor.in_org())).json()[
        "status"
    ] == "bounced"
    assert (await client.get(queue + kept["id"], headers=actor.in_org())).json()["status"] == "sent"
    for number, to in enumerate(["grace@example.com", "ceo@victim.example"]):
        again = await send(client, actor, email(to=to), key=f"again-{number}")
        assert again.status_code == 202, again.text


async def test_a_dsn_naming_another_organizations_message_changes_nothing(
    app, client, actor, db, smtp
) -> None:
    other = await make_actor(db)
    theirs = (await send(client, other, email(to="grace@example.com"))).json()["message"]
    await run_delivery(worker_context(app, smtp))
    secret = await secret_of(app, db, actor)
    raw = forged_dsn(theirs["messageId"], "grace@example.com")
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    item = await client.get(f"/api/v1/engage/queue/{theirs['id']}", headers=other.in_org())
    assert item.json()["status"] == "sent"
    assert await suppressed(db, other.org.id) == set()
    assert await suppressed(db, actor.org.id) == set()
