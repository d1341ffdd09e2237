"""`salesplan_client.webhooks.verify` on real deliveries from our worker (contract §13, §17):
a typed event from a genuine one; both secrets during a rotation; a tampered body, another
secret or an old timestamp refused."""

from __future__ import annotations

import time
from typing import Any

import pytest
from salesplan_client import Salesplan, WebhookVerificationError, models, webhooks
from tests.client.conftest import Live
from tests.webhooks.conftest import deliver_due, worker_ctx
from tests.webhooks.receiver import Receiver


@pytest.fixture
def receiver(outbound_allow: Any) -> Any:
    found = Receiver().start()
    yield found
    found.stop()


async def test_a_real_delivery_verifies_into_a_typed_event(
    live: Live, app, actor, receiver
) -> None:
    with Salesplan(live.origin, api_key=actor.key, organization_id=str(actor.org.id)) as sp:
        endpoint = sp.webhooks.endpoints.create(url=receiver.url, event_types=["account.*"])
        account = sp.accounts.create(name="Acme")
        assert await deliver_due(worker_ctx(app)) == 1
        [got] = receiver.received
        event = webhooks.verify(got.body, got.headers, endpoint.secret)
        assert event.type == "account.created" and event.id == got.headers["webhook-id"]
        assert isinstance(event.data, models.Account) and event.data == account
        assert event.timestamp.tzinfo is not None

        # Rotation: the server signs with both secrets; a receiver holding either verifies.
        rotated = sp.webhooks.endpoints.rotate_secret(endpoint.id)
        assert rotated.secret != endpoint.secret
        sp.accounts.patch(account.id, name="Acme 2")
        assert await deliver_due(worker_ctx(app)) == 1
        second = receiver.received[1]
        assert len(second.headers["webhook-signature"].split()) == 2
        for secret in (endpoint.secret, rotated.secret, [endpoint.secret, rotated.secret]):
            updated = webhooks.verify(second.body, second.headers, secret)
            assert updated.type == "account.updated" and updated.data.name == "Acme 2"

        with pytest.raises(WebhookVerificationError, match="signature"):
            webhooks.verify(got.body.replace(b"Acme", b"Evil"), got.headers, endpoint.secret)
        with pytest.raises(WebhookVerificationError, match="signature"):
            webhooks.verify(got.body, got.headers, "whsec_" + "A" * 43 + "=")
        sent_at = int(got.headers["webhook-timestamp"])
        with pytest.raises(WebhookVerificationError, match="timestamp"):
            webhooks.verify(got.body, got.headers, endpoint.secret, now=sent_at + 301)
        assert webhooks.verify(got.body, got.headers, endpoint.secret, now=sent_at + 299)
        headers = {k: v for k, v in got.headers.items() if k != "webhook-signature"}
        with pytest.raises(WebhookVerificationError, match="missing"):
            webhooks.verify(got.body, headers, endpoint.secret)
        assert abs(time.time() - sent_at) < 60
