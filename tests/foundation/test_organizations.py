"""listOrganizations, getOrganization, listOrganizationUsers and the /subscribers alias."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_user


async def test_list_organizations_shows_reachable_ones(client, actor) -> None:
    body = (await client.get("/api/v1/organizations", headers=actor.headers)).json()
    assert len(body["data"]) == 1
    org = body["data"][0]
    assert set(org) == {"id", "name", "slug", "createdAt", "updatedAt"}
    assert org["id"] == str(actor.org.id) and org["createdAt"].endswith("Z")


async def test_get_organization(client, actor) -> None:
    response = await client.get(f"/api/v1/organizations/{actor.org.id}", headers=actor.headers)
    assert response.status_code == 200 and response.json()["name"] == actor.org.name


async def test_get_organization_bad_id_is_400(client, actor) -> None:
    assert_envelope(
        await client.get("/api/v1/organizations/nope", headers=actor.headers),
        400,
        "validation_error",
    )


async def test_list_organization_users_with_roles(client, db, actor) -> None:
    await make_user(db, actor.org, email="zed@example.com", role="consultant", name="Zed")
    body = (
        await client.get(
            f"/api/v1/organizations/{actor.org.id}/users",
            headers=actor.headers,
            params={"sortBy": "email"},
        )
    ).json()
    assert body["pagination"]["totalCount"] == 2
    zed = body["data"][-1]
    assert zed == {
        "id": zed["id"],
        "email": "zed@example.com",
        "fullName": "Zed",
        "role": "consultant",
    }


async def test_users_of_another_org_is_404(client, db, actor) -> None:
    from tests.fixtures.factories import make_org

    other = await make_org(db)
    await make_user(db, other)
    response = await client.get(f"/api/v1/organizations/{other.id}/users", headers=actor.headers)
    assert_envelope(response, 404, "not_found")


async def test_subscribers_alias(client, actor) -> None:
    a = (await client.get("/api/v1/subscribers", headers=actor.headers)).json()
    b = (await client.get("/api/v1/organizations", headers=actor.headers)).json()
    assert a == b
    one = await client.get(f"/api/v1/subscribers/{actor.org.id}", headers=actor.headers)
    assert one.status_code == 200
