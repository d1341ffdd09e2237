"""Contract §12 "Suppression": the list compares the parsed address (display name, angle
brackets, quotes, comments and case removed): after a one-click unsubscribe of
optout@x.example, no spelling of that address gets mail."""

from __future__ import annotations

from salesplan.engage.delivery.worker import run_delivery
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_campaign_start import enroll, make_campaign, queue, start, work
from tests.engage_delivery.test_send import email, send
from tests.fixtures.crm import make_account, make_contact

SPELLINGS = [
    "Opt Out <optout@x.example>",
    "<optout@x.example>",
    '"optout@x.example"',
    "optout@x.example (comment)",
    "OPTOUT@X.EXAMPLE",
    '"Opt, Out" <OptOut@X.example>',
]


async def unsubscribe(app, client, actor, smtp, to: str) -> None:
    """Send to `to`, deliver it to the sink, and follow its List-Unsubscribe one-click link."""
    sent = await send(client, actor, email(to=to), key="first")
    assert sent.status_code == 202, sent.text
    await run_delivery(worker_context(app, smtp))
    mail = smtp.received[-1]
    url = mail["List-Unsubscribe"].strip("<>").replace("http://testserver", "")
    response = await client.post(url, content=b"List-Unsubscribe=One-Click")
    assert response.status_code == 200


async def test_every_spelling_of_an_unsubscribed_address_is_suppressed(
    app, client, actor, smtp
) -> None:
    await unsubscribe(app, client, actor, smtp, "optout@x.example")
    received = len(smtp.received)
    for number, to in enumerate(SPELLINGS):
        refused = await send(client, actor, email(to=to), key=f"k-{number}")
        assert refused.status_code == 422, (to, refused.text)
        assert refused.json()["error"]["details"]["reason"] == "suppressed"
    await run_delivery(worker_context(app, smtp))
    assert len(smtp.received) == received
    listed = await client.get("/api/v1/engage/queue", headers=actor.in_org())
    assert [m["to"] for m in listed.json()["data"]] == ["optout@x.example"]


async def test_an_unsubscribe_from_a_decorated_address_suppresses_the_address(
    app, client, actor, smtp
) -> None:
    await unsubscribe(app, client, actor, smtp, "Opt Out <OptOut@X.example>")
    refused = await send(client, actor, email(to="optout@x.example"), key="again")
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["suppression"] == "unsubscribed"


async def test_campaigns_skip_a_contact_whose_address_is_suppressed_however_written(
    app, client, actor, db, smtp
) -> None:
    await unsubscribe(app, client, actor, smtp, "optout@x.example")
    received = len(smtp.received)
    account, _ = await make_account(db, actor.org.id)
    people = [
        await make_contact(db, account, first=f"P{i}", email=address)
        for i, address in enumerate(["<optout@x.example>", '"optout@x.example"'])
    ]
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [p.id for p in people])
    started = await start(client, actor, campaign["id"])
    assert started.status_code == 200, started.text
    assert started.json()["started"] == 0
    await work(app, smtp)
    assert await queue(client, actor, campaign["id"]) == []
    assert len(smtp.received) == received
