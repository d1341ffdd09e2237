"""Attribution (contract §12 "Feed visibility and attribution"): own domains are the users' e-mail
domains minus public mailbox providers, or the list an admin sets; a participant who is a contact
of an account attributes the thread to it whatever the domain. Through the signed inbound-mail
and Slack endpoints."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.feed.service import set_own_domains
from salesplan.models.feed import FeedMessage, FeedOwnDomain
from tests.feed.helpers import (
    T0,
    enable_slack,
    post_mail,
    post_slack,
    reply_mail,
    sent_email,
    slack_event,
)
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_user
from tests.foundation.test_cli import cli_db, run_cli

__all__ = ["cli_db"]

API = "/api/v1/accounts"


async def subjects(client: httpx.AsyncClient, actor: Actor, account_id: Any) -> list[str | None]:
    r = await client.get(f"{API}/{account_id}/inbox", headers=actor.in_org())
    assert r.status_code == 200, r.text
    return [i["subject"] for i in r.json()["data"]]


async def test_a_users_gmail_address_hides_no_gmail_contact(client, db, app, actor) -> None:
    """A user with a gmail.com address does not make gmail.com the organization's: a customer's
    gmail.com contact's mail and Slack messages are in the account's inbox."""
    await make_user(db, actor.org, email="rep@gmail.com")
    await make_user(db, actor.org, email="other@outlook.com")
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    await make_contact(db, account, "Bob", "B", email="bob@gmail.com")
    await make_contact(db, account, "Ola", "O", email="ola@outlook.com")
    msg = await sent_email(db, actor.org.id, "bob@gmail.com", T0, subject="Pricing")
    r = await post_mail(client, db, actor.org.id, reply_mail("Bob <bob@gmail.com>", msg, "Yes."))
    assert r.status_code == 202, r.text
    r = await post_mail(
        client, db, actor.org.id, reply_mail("ola@outlook.com", None, "Hi", subject="Question")
    )
    assert r.status_code == 202, r.text
    await enable_slack(db, app, actor.org.id)
    r = await post_slack(
        client, actor.org.id, slack_event("From Slack", email="bob@gmail.com", ts=f"{time.time()}")
    )
    assert r.status_code == 200
    found = await subjects(client, actor, account.id)
    assert sorted(found, key=str) == sorted([None, "Question", "Pricing"], key=str)
    # Bob writes from outside: inbound; the gmail.com user writes from inside: outbound.
    r = await post_slack(
        client,
        actor.org.id,
        slack_event("Rep here", email="rep@gmail.com", ts=f"{time.time()}", event_id="EvRep"),
    )
    assert r.status_code == 200
    rows = (await db.execute(select(FeedMessage.text, FeedMessage.direction))).all()
    directions = {text: direction for text, direction in rows}
    assert directions["From Slack"] == "inbound" and directions["Rep here"] == "outbound"


async def test_a_contact_attributes_whatever_the_domain(client, db, actor) -> None:
    """A contact of the account with an address of the organization's own domain attributes the
    thread; a colleague who is no contact does not, even when the account's domain is own."""
    own = actor.user.email.rsplit("@", 1)[1]
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    await make_contact(db, account, "Col", "League", email=f"advisor@{own}")
    ours, _ = await make_account(db, actor.org.id, "Ourselves", domain=own)
    await sent_email(db, actor.org.id, f"advisor@{own}", T0, subject="Advisor")
    await sent_email(db, actor.org.id, f"colleague@{own}", T0, subject="Internal")
    await sent_email(db, actor.org.id, "jane@acme.test", T0, subject="External")
    assert sorted(await subjects(client, actor, account.id), key=str) == ["Advisor", "External"]
    # mail among the organization's own people belongs to no account by domain
    assert await subjects(client, actor, ours.id) == []


async def test_an_explicit_list_replaces_the_users_domains(client, db, actor) -> None:
    users_domain = actor.user.email.rsplit("@", 1)[1]
    by_users, _ = await make_account(db, actor.org.id, "Users' domain", domain=users_domain)
    corp, _ = await make_account(db, actor.org.id, "Corp", domain="corp.test")
    await sent_email(db, actor.org.id, f"someone@{users_domain}", T0, subject="To users' domain")
    await sent_email(db, actor.org.id, "someone@corp.test", T0, subject="To corp")
    assert await subjects(client, actor, by_users.id) == []
    assert await subjects(client, actor, corp.id) == ["To corp"]

    await set_own_domains(db, actor.org.id, ["corp.test"])
    await db.commit()
    assert await subjects(client, actor, by_users.id) == ["To users' domain"]
    assert await subjects(client, actor, corp.id) == []
    # cleared: back to the users' domains
    await set_own_domains(db, actor.org.id, [])
    await db.commit()
    assert await subjects(client, actor, by_users.id) == []


async def test_set_integration_own_domains_cli(cli_db: str) -> None:
    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Hooli").stdout)["id"]
    result = run_cli(
        cli_db, "admin", "set-integration", "--org", org, "--own-domains", "B.test, a.test,b.test"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ownDomains"] == ["a.test", "b.test"]
    bad = run_cli(cli_db, "admin", "set-integration", "--org", org, "--own-domains", "a.test,x y")
    assert bad.returncode != 0 and "domain" in bad.stderr.lower()
    engine = create_async_engine(cli_db)
    async with engine.connect() as conn:
        stored = (await conn.execute(select(FeedOwnDomain.domain))).scalars().all()
    await engine.dispose()
    assert sorted(stored) == ["a.test", "b.test"]
    cleared = run_cli(cli_db, "admin", "set-integration", "--org", org, "--own-domains", "")
    assert cleared.returncode == 0, cleared.stderr
    assert json.loads(cleared.stdout)["ownDomains"] == []
    unknown = run_cli(
        cli_db, "admin", "set-integration", "--org", str(uuid.uuid4()), "--own-domains", "a.test"
    )
    assert unknown.returncode != 0 and "not found" in unknown.stderr.lower()
