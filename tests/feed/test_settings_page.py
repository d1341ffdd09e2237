"""The Slack fields of the developer-settings page (contract §11 "Organization integrations"):
admins only, CSRF-protected, the secret stored encrypted and never shown back; the secret set
there is the one inbound Slack verifies with."""

from __future__ import annotations

import time

import httpx
from sqlalchemy import select

from salesplan.engage.delivery.integrations import slack_signing_secret, slack_webhook_url
from salesplan.models.engage_delivery import OrganizationIntegration
from salesplan.models.feed import FeedOwnDomain
from tests.feed.helpers import post_slack, slack_event
from tests.fixtures.factories import Actor, make_actor
from tests.oauth.flow import csrf_of, sign_in

DEV = "/settings/developer"
SECRET = "f00dfeedf00dfeedf00dfeedf00dfeed"


async def save(client: httpx.AsyncClient, org_id: object, data: dict[str, str]) -> httpx.Response:
    token = csrf_of((await client.get(DEV)).text)
    return await client.post(f"{DEV}/integrations/{org_id}", data={"csrf_token": token, **data})


async def test_admin_sets_the_slack_fields(client, db, app, actor: Actor) -> None:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    page = (await client.get(DEV)).text
    assert 'name="slack_signing_secret"' in page and 'name="slack_webhook_url"' in page
    assert f"/inbound/slack?organizationId={actor.org.id}" in page
    r = await save(
        client,
        actor.org.id,
        {"slack_webhook_url": "https://hooks.slack.test/T/B/x", "slack_signing_secret": SECRET},
    )
    assert r.status_code == 303
    settings = app.state.settings
    assert await slack_signing_secret(db, settings, actor.org.id) == SECRET
    assert await slack_webhook_url(db, settings, actor.org.id) == "https://hooks.slack.test/T/B/x"
    row = (await db.execute(select(OrganizationIntegration))).scalar_one()
    assert SECRET.encode() not in (row.slack_signing_secret_encrypted or b"")
    page = (await client.get(DEV)).text
    assert SECRET not in page and "hooks.slack.test" not in page
    assert "Slack signing secret (set)" in page
    # the secret set on the page is the one inbound Slack verifies with
    event = slack_event("hi", email="jane@acme.test", ts=f"{time.time():.6f}")
    assert (await post_slack(client, actor.org.id, event, secret=SECRET)).status_code == 200
    # an empty field keeps the value; "remove" clears it
    org_id = actor.org.id
    await save(client, org_id, {"slack_webhook_url": "", "slack_signing_secret": ""})
    db.expire_all()
    assert await slack_signing_secret(db, settings, org_id) == SECRET
    await save(client, org_id, {"clear_slack_signing_secret": "1"})
    db.expire_all()
    assert await slack_signing_secret(db, settings, org_id) is None


async def test_without_csrf_or_admin_role_nothing_changes(client, db, app) -> None:
    member = await make_actor(db, role="member")
    assert (await sign_in(client, member.user.email)).status_code == 303
    assert 'name="slack_signing_secret"' not in (await client.get(DEV)).text
    r = await save(client, member.org.id, {"slack_signing_secret": SECRET})
    assert r.status_code == 303
    assert "Only an admin" in (await client.get(DEV)).text
    stranger = await make_actor(db)  # an organization the member does not belong to
    await save(client, stranger.org.id, {"slack_signing_secret": SECRET})
    r = await client.post(
        f"{DEV}/integrations/{member.org.id}", data={"slack_signing_secret": SECRET}
    )
    assert r.status_code == 303
    assert (await db.execute(select(OrganizationIntegration))).first() is None


async def test_admin_sets_the_own_domains(client, db, actor: Actor) -> None:
    """The own-domains field (contract §12): the list `set-integration --own-domains` sets;
    a bad domain is refused with a message, a member changes nothing, empty clears it."""
    assert (await sign_in(client, actor.user.email)).status_code == 303
    page = (await client.get(DEV)).text
    assert 'name="own_domains"' in page
    org_id = actor.org.id
    member = await make_actor(db, role="member")
    other_org = member.org.id

    async def save_domains(org_id: object, value: str) -> None:
        token = csrf_of((await client.get(DEV)).text)
        r = await client.post(
            f"{DEV}/integrations/{org_id}/own-domains",
            data={"csrf_token": token, "own_domains": value},
        )
        assert r.status_code == 303

    async def stored() -> list[str]:
        db.expire_all()
        return sorted((await db.execute(select(FeedOwnDomain.domain))).scalars())

    await save_domains(org_id, "Corp.test, corp.example\ncorp.test")
    assert await stored() == ["corp.example", "corp.test"]
    assert 'value="corp.example, corp.test"' in (await client.get(DEV)).text
    await save_domains(org_id, "corp.test, not a domain")
    assert "Not a domain name" in (await client.get(DEV)).text
    assert await stored() == ["corp.example", "corp.test"]
    # a member of another organization cannot set them
    await save_domains(other_org, "evil.test")
    assert await stored() == ["corp.example", "corp.test"]
    await save_domains(org_id, "")
    assert await stored() == []
