"""Issue 38: `"ada1"@victim.example` bypassed the suppression of ada1@victim.example. Every
comparison and normalized column uses one canonical address (`kit.email.mailbox`): quoted local
parts unquoted where RFC 5322 allows, the domain IDNA-encoded and lower-cased."""

from __future__ import annotations

import pytest

from salesplan.kit.email import mailbox
from tests.engage_delivery.test_campaign_start import enroll, make_campaign, queue, start, work
from tests.engage_delivery.test_send import email, send
from tests.engage_delivery.test_suppression_parsed import unsubscribe
from tests.engage_delivery.test_tracking_inbound import post_inbound, secret_of
from tests.fixtures.crm import make_account, make_contact


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ('"ada1"@victim.example', "ada1@victim.example"),
        ('Ada <"ada1"@Victim.Example>', "ada1@victim.example"),
        ('"ada"."one"@victim.example', "ada.one@victim.example"),
        ('"ada".one@victim.example', "ada.one@victim.example"),
        ("ada1@VICTIM.example.", "ada1@victim.example"),
        ("ada@Bücher.example", "ada@xn--bcher-kva.example"),
        ('"a b"@x.example', '"a b"@x.example'),  # needs its quotes: kept
        ('"a..b"@x.example', '"a..b"@x.example'),  # not a dot-atom: kept
        ("Opt Out <optout@x.example>", "optout@x.example"),
        ('"optout@x.example"', "optout@x.example"),
    ],
)
def test_the_canonical_address(spelling: str, canonical: str) -> None:
    assert mailbox(spelling) == canonical


@pytest.mark.parametrize(
    ("suppressed", "sent"),
    [
        ("ada1@victim.example", '"ada1"@victim.example'),
        ("ada1@victim.example", 'Ada <"ADA1"@Victim.Example>'),
        ('"ada1"@victim.example', "ada1@victim.example"),
        ("ada@xn--bcher-kva.example", "ada@Bücher.example"),
    ],
)
async def test_a_quoted_or_idn_spelling_does_not_bypass_suppression(
    app, client, actor, smtp, suppressed: str, sent: str
) -> None:
    await unsubscribe(app, client, actor, smtp, suppressed)
    received = len(smtp.received)
    refused = await send(client, actor, email(to=sent), key="again")
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["reason"] == "suppressed"
    await work(app, smtp)
    assert len(smtp.received) == received


async def test_a_campaign_skips_a_quoted_spelling_of_a_suppressed_contact(
    app, client, actor, db, smtp
) -> None:
    await unsubscribe(app, client, actor, smtp, "ada1@victim.example")
    received = len(smtp.received)
    account, _ = await make_account(db, actor.org.id)
    person = await make_contact(db, account, email='"ada1"@victim.example')
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [person.id])
    started = await start(client, actor, campaign["id"])
    assert started.status_code == 200, started.text
    assert started.json()["started"] == 0
    await work(app, smtp)
    assert await queue(client, actor, campaign["id"]) == []
    assert len(smtp.received) == received


async def test_an_inbound_reply_from_a_quoted_spelling_finds_its_contact(
    app, client, actor, db
) -> None:
    account, _ = await make_account(db, actor.org.id)
    person = await make_contact(db, account, email="ada1@victim.example")
    secret = await secret_of(app, db, actor)
    raw = (
        b'From: Ada <"ada1"@Victim.Example>\r\nTo: sales@example.com\r\nSubject: hello\r\n'
        b"Message-ID: <q-1@victim.example>\r\n\r\nHi.\r\n"
    )
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    replies = (await client.get("/api/v1/engage/replies", headers=actor.in_org())).json()
    assert [r["contactId"] for r in replies["data"]] == [str(person.id)]
