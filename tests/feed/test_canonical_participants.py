"""Issue 38: the feed stores and compares participants and authors as the one canonical address
(`kit.email.mailbox`): a quoted or decorated spelling is the contact it names."""

from __future__ import annotations

from salesplan.feed.slack import _author_email
from tests.feed.helpers import T0, sent_email
from tests.feed.test_inbox import acme, inbox


def test_a_slack_author_is_its_canonical_address() -> None:
    assert _author_email('"Jane"@Acme.Test') == "jane@acme.test"
    assert _author_email("Jane <jane@acme.test>") == "jane@acme.test"


async def test_a_quoted_recipient_is_the_contact_it_names(client, db, actor) -> None:
    account, _ = await acme(db, actor)
    await sent_email(db, actor.org.id, 'Jane Doe <"jane"@Acme.test>', T0, subject="Quoted")
    body = await inbox(client, actor, account.id)
    [item] = body["data"]
    assert {"email": "jane@acme.test", "name": None} in item["participants"]
