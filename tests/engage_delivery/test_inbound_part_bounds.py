"""The bounds of an inbound mail's header section hold for the header sections of its MIME
parts and attached messages too (mail_bounds.bound_message): a part's `Content-Type` of 20,000
parameters held one of the two parser threads 22 s, 20,000 encoded words in a part's filename
67 s, so two such mails held every inbound parse behind them."""

from __future__ import annotations

import asyncio

from salesplan.engage.delivery.inbound import read_email
from salesplan.engage.delivery.mail_bounds import (
    MAX_DEPTH,
    MAX_ENCODED_WORDS,
    MAX_PARAMETERS,
    MAX_PARTS,
    bound_message,
)
from tests.engage_delivery.test_tracking_inbound import post_inbound, secret_of

TOP = b"From: Ada <ada@buyer.example>\r\nTo: sales@example.com\r\nSubject: Re: hi\r\nMIME-Version: 1.0\r\n"


def multipart(*parts: bytes, boundary: bytes = b"BB", extra: bytes = b"") -> bytes:
    body = b"".join(b"--" + boundary + b"\r\n" + part + b"\r\n" for part in parts)
    return (
        TOP
        + extra
        + b'Content-Type: multipart/mixed; boundary="'
        + boundary
        + b'"\r\n\r\n'
        + body
        + b"--"
        + boundary
        + b"--\r\n"
    )


TEXT = b"Content-Type: text/plain; charset=utf-8\r\n\r\nSounds good, see you Tuesday."
PARAMS = b"Content-Type: text/plain; " + b"; ".join(b"p%d=v" % i for i in range(20_000))
FILENAME = b'Content-Type: application/pdf\r\nContent-Disposition: attachment; filename="'
FILENAME += b" ".join([b"=?utf-8?q?a?="] * 20_000) + b'"\r\n\r\nJVBERi0='


def test_a_mail_within_the_bounds_is_left_as_it_is() -> None:
    raw = multipart(TEXT, b"Content-Type: text/html\r\n\r\n<p>Sounds good</p>")
    assert bound_message(raw) is raw


def test_part_headers_are_bounded() -> None:
    bounded = bound_message(multipart(TEXT, PARAMS + b"\r\n\r\nx", FILENAME))
    _, _, params_part, filename_part = bounded.split(b"\r\n--BB\r\n")
    content_type = params_part.split(b"\r\n\r\n", 1)[0]
    assert content_type.count(b";") == MAX_PARAMETERS
    disposition = filename_part.split(b"\r\n\r\n", 1)[0]
    assert disposition.count(b"=?") == MAX_ENCODED_WORDS
    assert read_email(bounded).text == "Sounds good, see you Tuesday."


def test_an_attached_message_and_a_nested_multipart_are_bounded() -> None:
    inner = multipart(PARAMS + b"\r\n\r\nx", boundary=b"CC").replace(TOP, b"")
    attached = b"Content-Type: message/rfc822\r\n\r\n" + TOP + b"Subject: inner\r\n" + inner
    bounded = bound_message(multipart(TEXT, attached))
    assert bounded.count(b";") < MAX_PARAMETERS + 10
    assert read_email(bounded).text == "Sounds good, see you Tuesday."


def test_parts_past_the_limits_are_dropped() -> None:
    many = bound_message(multipart(TEXT, *[b"Content-Type: text/plain\r\n\r\nx"] * (MAX_PARTS + 5)))
    assert many.count(b"\r\n--BB\r\n") == MAX_PARTS
    assert many.rstrip().endswith(b"--")
    nested = TEXT
    for depth in range(MAX_DEPTH + 5):
        nested = multipart(nested, boundary=b"D%d" % depth).replace(TOP, b"")
    deep = bound_message(TOP + nested)
    assert deep.count(b"Sounds good") == 0  # below MAX_DEPTH: dropped
    assert len(deep) < len(TOP + nested)


async def test_hostile_parts_hold_no_parser_thread(app, client, actor, db) -> None:
    secret = await secret_of(app, db, actor)
    mails = [
        multipart(PARAMS + b"\r\n\r\nx", TEXT).replace(
            b"Subject:", b"Message-ID: <p1@b.example>\r\nSubject:"
        ),
        multipart(FILENAME, TEXT).replace(b"Subject:", b"Message-ID: <p2@b.example>\r\nSubject:"),
        multipart(TEXT).replace(b"Subject:", b"Message-ID: <p3@b.example>\r\nSubject:"),
    ]
    # Before the bounds, the first two held both parser threads past a minute; a liveness
    # bound, not a measurement (bench/ measures).
    answers = await asyncio.wait_for(
        asyncio.gather(*(post_inbound(client, actor.org.id, raw, secret) for raw in mails)), 30
    )
    assert [a.status_code for a in answers] == [202, 202, 202], [a.text for a in answers]
    replies = await client.get("/api/v1/engage/replies", headers=actor.in_org())
    texts = [r.get("text") or r.get("body") for r in replies.json()["data"]]
    # The first mail's first text part is the hostile one (its body "x"), stored as such.
    assert sorted(texts) == ["Sounds good, see you Tuesday."] * 2 + ["x"], texts
