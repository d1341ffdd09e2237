"""Issue 38 (high): one signed inbound mail must not freeze the server. Its header section is
bounded before the parser sees it (stored truncated) and it is parsed in a worker thread, so
`/healthz` keeps answering in under 100 ms while the worst mail is taken."""

from __future__ import annotations

import asyncio
import time

import pytest

from salesplan.engage.delivery.mail_bounds import (
    MAX_ADDRESSES,
    MAX_ENCODED_WORDS,
    MAX_FIELD_BYTES,
    MAX_HEADER_FIELDS,
    bound_headers,
)
from tests.engage_delivery.test_tracking_inbound import post_inbound, secret_of

HEALTH_BUDGET_SECONDS = 0.1


def mail(*headers: str, body: str = "Hello.") -> bytes:
    return ("\r\n".join([*headers, "Message-ID: <big-1@example.com>", "", body, ""])).encode()


FROM_25000 = mail(
    "From: " + ", ".join(f"Person {i} <p{i}@sender.example>" for i in range(25_000)),
    "To: sales@example.com",
    "Subject: many senders",
)
SUBJECT_40000 = mail(
    "From: Ada <ada@sender.example>",
    "To: sales@example.com",
    "Subject: " + " ".join("=?utf-8?q?a?=" for _ in range(40_000)),
)


async def _taken_while_health_polled(client, actor, raw: bytes, secret: str) -> list[float]:
    """Post `raw` and poll `/healthz` until it is answered; the latency of every poll."""
    posting = asyncio.create_task(post_inbound(client, actor.org.id, raw, secret))
    latencies: list[float] = []
    while not posting.done() or not latencies:
        start = time.perf_counter()
        health = await client.get("/healthz")
        latencies.append(time.perf_counter() - start)
        assert health.status_code == 200
        await asyncio.sleep(0.005)
    response = await posting
    assert response.status_code == 202, response.text
    return latencies


async def _replies(client, actor) -> list[dict]:
    replies = await client.get("/api/v1/engage/replies", headers=actor.in_org())
    assert replies.status_code == 200, replies.text
    data: list[dict] = replies.json()["data"]
    return data


@pytest.mark.parametrize("raw", [FROM_25000, SUBJECT_40000], ids=["from-25000", "subject-40000"])
async def test_the_worst_mail_leaves_healthz_under_100_ms(app, client, actor, db, raw) -> None:
    secret = await secret_of(app, db, actor)
    # A small mail first: what a fresh process does once (statements compiled, modules
    # loaded) is not what is measured.
    small = mail("From: Bob <bob@sender.example>", "Subject: hi").replace(b"big-1", b"small-1")
    assert (await post_inbound(client, actor.org.id, small, secret)).status_code == 202
    latencies = await _taken_while_health_polled(client, actor, raw, secret)
    assert max(latencies) < HEALTH_BUDGET_SECONDS, latencies
    # Stored truncated: the first sender, the first encoded words.
    reply = next(r for r in await _replies(client, actor) if r["from"] != "bob@sender.example")
    if raw is FROM_25000:
        assert reply["from"] == "p0@sender.example"
    else:
        assert reply["subject"] == "a" * MAX_ENCODED_WORDS


def _header_section(raw: bytes) -> bytes:
    return raw.split(b"\r\n\r\n", 1)[0]


def test_address_fields_keep_their_first_addresses() -> None:
    head = _header_section(bound_headers(FROM_25000))
    from_line = head.split(b"\r\n")[0]
    assert from_line.count(b"@") == MAX_ADDRESSES
    assert from_line.startswith(b"From: Person 0 <p0@sender.example>")


def test_commas_inside_quotes_comments_and_brackets_are_not_separators() -> None:
    names = ", ".join(f'"Last, First {i}" (a, b) <x{i}@a.example>' for i in range(300))
    to = _header_section(bound_headers(mail("To: " + names))).split(b"\r\n")[0]
    assert to.count(b"@") == MAX_ADDRESSES
    assert to.endswith(b"<x99@a.example>")


def test_encoded_words_are_capped() -> None:
    head = _header_section(bound_headers(SUBJECT_40000))
    assert head.count(b"=?") == MAX_ENCODED_WORDS


def test_a_long_field_is_cut_and_extra_fields_dropped() -> None:
    long_field = "X-Long: " + "word " * 10_000
    many = [f"X-Filler-{i}: {i}" for i in range(2 * MAX_HEADER_FIELDS)]
    raw = mail("From: a@b.example", long_field, *many)
    bounded = bound_headers(raw)
    fields = _header_section(bounded).split(b"\r\n")
    assert len(fields) == MAX_HEADER_FIELDS
    assert MAX_FIELD_BYTES // 2 < len(fields[1]) <= MAX_FIELD_BYTES + len(b"X-Long:")
    assert bounded.endswith(b"\r\n\r\nHello.\r\n")  # the body is untouched


def test_references_keep_their_newest_ids_and_in_reply_to_its_first() -> None:
    refs = " ".join(f"<r{i}@a.example>" for i in range(1000))
    raw = mail("From: a@b.example", f"References: {refs}", f"In-Reply-To: {refs}")
    head = _header_section(bound_headers(raw)).decode()
    references, in_reply_to = head.split("\r\n")[1:3]
    assert references.split()[1] == "<r900@a.example>"
    assert references.split()[-1] == "<r999@a.example>"
    assert in_reply_to.split()[-1] == "<r99@a.example>"


def test_a_mail_within_the_bounds_is_left_as_it_is() -> None:
    raw = mail(
        "From: Ada <ada@a.example>", "To: b@b.example, c@c.example", "Subject: =?utf-8?q?hi?="
    )
    assert bound_headers(raw) is raw
