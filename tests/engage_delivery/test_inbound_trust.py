"""Contract §12 "Inbound mail" and "failures stay local": what one signed inbound e-mail may do
to the organization and to everyone else."""

from __future__ import annotations

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
