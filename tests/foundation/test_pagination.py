"""Contract §4, written once in kit/ and observed through listOrganizations."""

from __future__ import annotations

import base64

import pytest

from salesplan.organizations.service import add_user, create_organization
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import Actor, make_key

ORGS = "/api/v1/organizations"


@pytest.fixture
async def seven(db, actor):
    for i in range(6):
        org = await create_organization(db, name=f"Member org {i:02d}")
        await add_user(db, organization_id=org.id, email=actor.user.email)
    await db.commit()
    # A key made after the memberships reaches all seven (contract §15).
    return Actor(actor.org, actor.user, await make_key(db, actor.user))


async def test_page_mode_is_the_default_with_totals(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers)).json()
    assert body["pagination"] == {
        "hasNextPage": False,
        "totalCount": 7,
        "page": 1,
        "pageSize": 50,
        "totalPages": 1,
    }


async def test_page_mode_pages(client, seven) -> None:
    first = (await client.get(ORGS, headers=seven.headers, params={"pageSize": 3})).json()
    assert first["pagination"] == {
        "hasNextPage": True,
        "totalCount": 7,
        "page": 1,
        "pageSize": 3,
        "totalPages": 3,
    }
    last = (await client.get(ORGS, headers=seven.headers, params={"pageSize": 3, "page": 3})).json()
    assert len(last["data"]) == 1 and last["pagination"]["hasNextPage"] is False
    ids = set()
    for page in (1, 2, 3):
        data = (
            await client.get(ORGS, headers=seven.headers, params={"pageSize": 3, "page": page})
        ).json()["data"]
        ids |= {o["id"] for o in data}
    assert len(ids) == 7


async def test_total_pages_is_at_least_one_when_empty(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers, params={"search": "zzz"})).json()
    assert body["data"] == [] and body["pagination"]["totalPages"] == 1
    assert body["pagination"]["totalCount"] == 0


async def test_limit_alone_selects_cursor_mode_and_walks_everything(client, seven) -> None:
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 3, "sortBy": "name"} | ({"cursor": cursor} if cursor else {})
        body = (await client.get(ORGS, headers=seven.headers, params=params)).json()
        pages += 1
        seen += [o["name"] for o in body["data"]]
        assert body["pagination"]["pageSize"] == 3
        assert "totalCount" not in body["pagination"]
        if not body["pagination"]["hasNextPage"]:
            assert "nextCursor" not in body["pagination"]
            break
        cursor = body["pagination"]["nextCursor"]
    assert pages == 3 and seen == sorted(seen) and len(seen) == 7


async def test_cursor_mode_descending(client, seven) -> None:
    body = (
        await client.get(
            ORGS, headers=seven.headers, params={"limit": 4, "sortBy": "name", "order": "desc"}
        )
    ).json()
    names = [o["name"] for o in body["data"]]
    rest = (
        await client.get(
            ORGS,
            headers=seven.headers,
            params={
                "limit": 4,
                "sortBy": "name",
                "order": "desc",
                "cursor": body["pagination"]["nextCursor"],
            },
        )
    ).json()
    names += [o["name"] for o in rest["data"]]
    assert names == sorted(names, reverse=True) and len(names) == 7


async def test_tampered_cursor_is_400(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers, params={"limit": 2})).json()
    cursor = body["pagination"]["nextCursor"]
    payload, _, sig = cursor.partition(".")
    raw = base64.urlsafe_b64decode(payload + "==").replace(b'"asc"', b'"desc"')
    forged = base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + sig
    for bad in (forged, "garbage", cursor[:-2]):
        response = await client.get(ORGS, headers=seven.headers, params={"cursor": bad})
        assert_envelope(response, 400, "validation_error")


async def test_cursor_is_bound_to_its_sort(client, seven) -> None:
    body = (
        await client.get(ORGS, headers=seven.headers, params={"limit": 2, "sortBy": "name"})
    ).json()
    response = await client.get(
        ORGS,
        headers=seven.headers,
        params={"cursor": body["pagination"]["nextCursor"], "sortBy": "createdAt"},
    )
    assert_envelope(response, 400, "validation_error")


async def test_cursor_with_page_is_400(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers, params={"limit": 2})).json()
    response = await client.get(
        ORGS, headers=seven.headers, params={"cursor": body["pagination"]["nextCursor"], "page": 2}
    )
    assert_envelope(response, 400, "validation_error")


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 201},
        {"pageSize": 0},
        {"pageSize": 201},
        {"page": 0},
        {"order": "sideways"},
        {"sortBy": "password"},
        {"limit": "ten"},
    ],
)
async def test_bad_list_parameters_are_400(client, actor, params) -> None:
    assert_envelope(
        await client.get(ORGS, headers=actor.headers, params=params), 400, "validation_error"
    )


async def test_bounds_are_inclusive(client, actor) -> None:
    for params in ({"limit": 1}, {"limit": 200}, {"pageSize": 200}, {"pageSize": 1}):
        assert (await client.get(ORGS, headers=actor.headers, params=params)).status_code == 200


async def test_search_is_case_insensitive_substring(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers, params={"search": "MEMBER ORG 0"})).json()
    assert len(body["data"]) == 6
    body = (await client.get(ORGS, headers=seven.headers, params={"search": "%"})).json()
    assert body["data"] == []


@pytest.mark.parametrize("path", ["/api/v1/plans", "/api/v1/plans/", "/a?b#c\\d", "/x y/%41"])
def test_a_cursor_binds_the_path_as_starlette_spells_it(path) -> None:
    """The cursor's list is the request's `url.path`, read from the scope without building
    the URL: the same text, so that cursors made before stay valid."""
    from starlette.datastructures import URL

    from salesplan.kit.pagination import _url_path

    scope = {"type": "http", "path": path, "headers": [], "server": ("h", 80), "scheme": "http"}
    assert _url_path(scope) == URL(scope=scope).path


# Contract §4 (2026-11-27): a generated client sends the declared defaults `page=1` and
# `pageSize=50` with every call; beside `limit` or `cursor` they are as if absent.
DECLARED = {"page": 1, "pageSize": 50}


async def test_declared_defaults_beside_limit_and_cursor_walk_in_cursor_mode(client, seven) -> None:
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 3, "sortBy": "name", **DECLARED} | ({"cursor": cursor} if cursor else {})
        response = await client.get(ORGS, headers=seven.headers, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        pages += 1
        seen += [o["name"] for o in body["data"]]
        assert body["pagination"]["pageSize"] == 3
        assert "totalCount" not in body["pagination"] and "page" not in body["pagination"]
        if not body["pagination"]["hasNextPage"]:
            break
        cursor = body["pagination"]["nextCursor"]
    assert pages == 3 and seen == sorted(seen) and len(seen) == 7


async def test_a_cursor_with_the_declared_defaults_alone_is_cursor_mode(client, seven) -> None:
    first = (await client.get(ORGS, headers=seven.headers, params={"limit": 5})).json()
    rest = await client.get(
        ORGS,
        headers=seven.headers,
        params={"cursor": first["pagination"]["nextCursor"], **DECLARED},
    )
    assert rest.status_code == 200, rest.text
    # Without `limit`, the cursor's page holds the default 50: the two rows left.
    assert rest.json()["pagination"] == {"hasNextPage": False, "pageSize": 50}
    assert len(rest.json()["data"]) == 2


@pytest.mark.parametrize("other", [{"page": 2}, {"pageSize": 10}, {"page": 2, "pageSize": 50}])
async def test_another_page_or_size_beside_a_cursor_is_400(client, seven, other) -> None:
    first = (await client.get(ORGS, headers=seven.headers, params={"limit": 2})).json()
    params = {"cursor": first["pagination"]["nextCursor"], "limit": 2, **other}
    response = await client.get(ORGS, headers=seven.headers, params=params)
    assert_envelope(response, 400, "validation_error")


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        ({"page": 2}, {"page": 2, "pageSize": 3}),
        ({"pageSize": 5}, {"page": 1, "pageSize": 5}),
        ({"page": 2, "pageSize": 50}, {"page": 2, "pageSize": 3}),
        ({"page": 1, "pageSize": 4}, {"page": 1, "pageSize": 4}),
    ],
)
async def test_another_page_or_size_beside_limit_picks_page_mode(
    client, seven, other, expected
) -> None:
    response = await client.get(ORGS, headers=seven.headers, params={"limit": 3, **other})
    assert response.status_code == 200, response.text
    pagination = response.json()["pagination"]
    assert pagination["totalCount"] == 7
    assert {k: pagination[k] for k in expected} == expected


async def test_the_declared_defaults_alone_are_page_mode(client, seven) -> None:
    body = (await client.get(ORGS, headers=seven.headers, params=DECLARED)).json()
    assert body["pagination"]["totalCount"] == 7 and body["pagination"]["page"] == 1
