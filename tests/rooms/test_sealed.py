"""A room e-mail's secret is sealed in the outbox (engage/delivery/sealed.py): a message whose
seal cannot be opened (the secret key changed) fails on its own, with our words, without
stopping the batch, and keeps no secret."""

from __future__ import annotations

from sqlalchemy import select

from salesplan.engage.delivery.worker import run_delivery
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import smtp, worker_context
from tests.engage_delivery.test_send import email, send
from tests.plans.helpers import PLANS
from tests.rooms.helpers import make_deal, make_share

__all__ = ["smtp"]


async def test_an_unreadable_seal_fails_its_message_alone(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/shares/{share['id']}/send", headers=actor.in_org()
    )
    assert resp.status_code == 202
    plain = (await send(client, actor, email())).json()["message"]
    context = worker_context(app, smtp)
    context.settings.secret_key = "another-secret-key-altogether"
    context.settings.__dict__.pop("signing_key", None)
    assert await run_delivery(context) == 2
    assert len(smtp.received) == 1  # the plain message went
    assert smtp.received[0]["Message-ID"] == plain["messageId"]
    room = await client.get(
        f"/api/v1/engage/queue/{resp.json()['message']['id']}", headers=actor.in_org()
    )
    assert room.json()["status"] == "failed"
    assert room.json()["lastError"] == "sealed content unreadable with this secret key"
    sealed = (await db.execute(select(EngageMessage.sealed))).scalars().all()
    assert sealed == [None, None]
