"""Contract §12 "Inbound mail" and "failures stay local": what one signed inbound e-mail may do
to the organization and to everyone else."""

from __future__ import annotations

import asyncio

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


def plain_reply(message_id: str, body: bytes, *, headers: list[str] | None = None) -> bytes:
    head = [
        "From: Ada <ada@example.com>",
        "To: sales@example.com",
        "Subject: Re: Hi",
        "Message-ID: <reply-odd@example.com>",
        f"In-Reply-To: {message_id}",
        *(headers or ["Content-Type: text/plain; charset=utf-8"]),
        "",
        "",
    ]
    return "\r\n".join(head).encode() + body


async def replies_of(client, actor) -> list[dict]:
    response = await client.get("/api/v1/engage/replies", headers=actor.in_org())
    assert response.status_code == 200
    return list(response.json()["data"])


async def test_an_unknown_charset_is_read_as_utf8_with_replacement(
    app, client, actor, db, smtp
) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = plain_reply(
        message["messageId"],
        "Gr\u00fc\u00dfe, ja gerne.".encode() + b" \xff\xfe",
        headers=["MIME-Version: 1.0", "Content-Type: text/plain; charset=x-no-such-charset"],
    )
    response = await post_inbound(client, actor.org.id, raw, secret)
    assert response.status_code == 202, response.text
    (reply,) = await replies_of(client, actor)
    assert reply["text"].startswith("Gr\u00fc\u00dfe, ja gerne.")
    assert "\ufffd" in reply["text"]
    assert reply["messageId"] == message["id"]


async def test_nul_bytes_are_stored_best_effort(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = plain_reply(message["messageId"], b"Yes\x00 please\x00")
    raw = raw.replace(b"Subject: Re: Hi", b"Subject: Re:\x00 Hi")
    response = await post_inbound(client, actor.org.id, raw, secret)
    assert response.status_code == 202, response.text
    (reply,) = await replies_of(client, actor)
    assert reply["text"].replace("\ufffd", "").strip() == "Yes please"
    assert "\x00" not in reply["text"] and "\x00" not in (reply["subject"] or "")


MALFORMED = [
    # a multipart without its boundary, then one whose boundary never closes
    ["MIME-Version: 1.0", "Content-Type: multipart/alternative"],
    ["MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="zz"'],
    # a broken encoded-word and an undecodable transfer encoding
    ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: base64"],
    ["Subject: =?x-unknown?Q?=FF=FE?= =?utf-8?B?####?=", "Content-Type: text/html; charset=koi8"],
    ["From: <<<@>>>", "Message-ID: <<<>>>", 'Content-Type: text/plain; charset=""'],
]


async def test_malformed_mime_is_stored_or_refused_with_a_reason_never_500(
    app, client, actor, db, smtp
) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    for number, headers in enumerate(MALFORMED):
        raw = plain_reply(message["messageId"], b"--zz\r\nbody \xe9 ===\r\n", headers=headers)
        raw = raw.replace(b"<reply-odd@example.com>", f"<odd-{number}@example.com>".encode())
        response = await post_inbound(client, actor.org.id, raw, secret)
        assert response.status_code in (202, 400), (headers, response.text)
        if response.status_code == 400:
            assert response.json()["error"]["details"]["reason"]
    assert (await client.get("/api/v1/accounts", headers=actor.in_org())).status_code == 200


async def test_a_mail_of_9_mib_is_taken(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    attachment = b"QUJD" * (9 * 1024 * 1024 // 4)
    raw = plain_reply(
        message["messageId"],
        b"--b1\r\nContent-Type: text/plain\r\n\r\nSee the PDF.\r\n--b1\r\n"
        b"Content-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + attachment
        + b"\r\n--b1--\r\n",
        headers=["MIME-Version: 1.0", 'Content-Type: multipart/mixed; boundary="b1"'],
    )
    assert 9 * 1024 * 1024 < len(raw) < 10 * 1024 * 1024
    response = await post_inbound(client, actor.org.id, raw, secret)
    assert response.status_code == 202, response.text
    (reply,) = await replies_of(client, actor)
    assert reply["text"].strip() == "See the PDF."
    too_big = raw + b"x" * (1024 * 1024)
    response = await post_inbound(client, actor.org.id, too_big, secret)
    assert response.status_code == 413


async def test_the_same_message_id_twice_is_stored_once(app, client, actor, db, smtp) -> None:
    secret = await secret_of(app, db, actor)
    message, _ = await delivered(app, client, actor, smtp)
    raw = reply_to(message["messageId"])
    first, second = await asyncio.gather(
        post_inbound(client, actor.org.id, raw, secret),
        post_inbound(client, actor.org.id, raw, secret),
    )
    assert (first.status_code, second.status_code) == (202, 202), (first.text, second.text)
    third = await post_inbound(client, actor.org.id, raw, secret)
    assert third.status_code == 202, third.text
    assert len(await replies_of(client, actor)) == 1
    # Another organization may receive the same Message-ID: its own copy.
    other = await make_actor(db)
    other_secret = await secret_of(app, db, other)
    assert (await post_inbound(client, other.org.id, raw, other_secret)).status_code == 202
    assert len(await replies_of(client, other)) == 1
