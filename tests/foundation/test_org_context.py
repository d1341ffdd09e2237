"""Contract §3 organization context on an organization-scoped route."""

from __future__ import annotations

from salesplan.organizations.service import add_user
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_key, make_org
from tests.foundation.test_errors import probe_client as probe_client

THINGS = "/api/v1/probe/things"


async def test_single_reachable_organization_is_the_default(probe_client, actor) -> None:
    response = await probe_client.post(THINGS, json={"name": "a"}, headers=actor.headers)
    assert response.status_code == 201
    assert response.json()["organizationId"] == str(actor.org.id)


async def test_several_organizations_and_none_named_is_400_organization_required(
    probe_client,
    db,
    actor,
) -> None:
    second = await make_org(db)
    await add_user(db, organization_id=second.id, email=actor.user.email)
    await db.commit()
    # A key made now reaches both (contract §15: actor.key keeps the one it was made with).
    headers = {"Authorization": f"Bearer {await make_key(db, actor.user)}"}
    response = await probe_client.post(THINGS, json={"name": "a"}, headers=headers)
    assert_envelope(response, 400, "organization_required")
    response = await probe_client.post(
        THINGS, json={"name": "a"}, headers=headers | {"X-Organization-Id": str(second.id)}
    )
    assert response.json()["organizationId"] == str(second.id)


async def test_organization_check_comes_before_body_validation(probe_client, db, actor) -> None:
    other = await make_org(db)
    response = await probe_client.post(THINGS, json={"bogus": 1}, headers=actor.in_org(other.id))
    assert_envelope(response, 403, "forbidden")
