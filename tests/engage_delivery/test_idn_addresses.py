"""An address with a non-ASCII domain goes out with its domain in IDNA A-labels (envelope and
To header); one that SMTP cannot carry without SMTPUTF8 (a non-ASCII local part) fails alone,
with its reason, and never stops the rest of its batch (before: a UnicodeEncodeError out of the
SMTP client ended the whole batch, every time the worker claimed it)."""

from __future__ import annotations

import uuid

from salesplan.engage.delivery.transports import UNSENDABLE
from salesplan.kit.email import smtp_address
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import smtp
from tests.engage_delivery.test_campaign_start import work
from tests.engage_delivery.test_send import email, send

__all__ = ["smtp"]


def test_the_smtp_address() -> None:
    assert smtp_address("ada@Bücher.example") == "ada@xn--bcher-kva.example"
    assert smtp_address("Ada <Ada.L@Example.COM>") == "Ada.L@example.com"
    assert smtp_address("jörg@bücher.example") is None
    assert smtp_address("no-at-sign") is None


async def test_one_unsendable_address_fails_alone(app, client, actor, db, smtp) -> None:
    ids = {}
    for i, to in enumerate(["ada@Bücher.example", "jörg@bücher.example", "bob@example.com"]):
        resp = await send(client, actor, email(to=to), key=f"idn-{i}")
        assert resp.status_code == 202, resp.text
        ids[to] = uuid.UUID(resp.json()["message"]["id"])
    await work(app, smtp)
    assert sorted(r for rs in smtp.recipients for r in rs) == [
        "ada@xn--bcher-kva.example",
        "bob@example.com",
    ]
    assert sorted(str(m["To"]) for m in smtp.received) == [
        "ada@xn--bcher-kva.example",
        "bob@example.com",
    ]
    rows = {to: await db.get(EngageMessage, i) for to, i in ids.items()}
    for row in rows.values():
        assert row is not None
        await db.refresh(row)
    assert rows["ada@Bücher.example"].status == "sent"
    assert rows["bob@example.com"].status == "sent"
    failed = rows["jörg@bücher.example"]
    assert failed.status == "failed"
    assert failed.last_error == UNSENDABLE
