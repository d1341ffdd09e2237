"""Every value a client sends is storable on both engines or a 400 (issue 18, defect 6):
no NUL character anywhere, integers within their column, finite numbers only."""

from __future__ import annotations

import pytest

from tests.fixtures.crm import make_account
from tests.fixtures.envelope import assert_envelope
from tests.plans.helpers import PLANS, get, new_plan, patch, post


async def test_a_nul_byte_in_a_body_string_is_a_400(client, db, actor) -> None:
    _, group = await make_account(db, actor.org.id)
    body = {"name": "evil\x00plan", "entityType": "BUYING_GROUP", "entityId": str(group.id)}
    resp = await client.post(PLANS, json=body, headers=actor.in_org())
    assert_envelope(resp, 400, "validation_error")


async def test_a_nul_byte_in_a_free_form_object_or_key_is_a_400(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    for milestone in ({"name": "a\x00b"}, {"k\x00": 1}, {"deep": [{"x": "\x00"}]}):
        resp = await post(client, actor, f"/{plan['id']}/milestones", {"milestone": milestone})
        assert_envelope(resp, 400, "validation_error")


async def test_a_nul_byte_in_a_query_string_is_a_400(client, db, actor) -> None:
    resp = await get(client, actor, "", search="a\x00b")
    assert_envelope(resp, 400, "validation_error")
    for path, params in (
        ("/api/v1/accounts", {"crmId": "x\x00"}),
        ("/api/v1/contacts", {"email": "x\x00"}),
        ("/api/v1/opportunities", {"stage": "x\x00"}),
    ):
        resp = await client.get(path, params=params, headers=actor.in_org())
        assert_envelope(resp, 400, "validation_error")


async def test_a_nul_query_without_credentials_is_still_a_401(client) -> None:
    resp = await client.get(PLANS, params={"search": "a\x00b"})
    assert_envelope(resp, 401, "unauthorized")


@pytest.mark.parametrize("page", ["9223372036854775807", "2147483648", "99999999999999999999999"])
async def test_a_page_beyond_what_an_offset_holds_is_a_400(client, actor, page) -> None:
    resp = await client.get(PLANS, params={"page": page}, headers=actor.in_org())
    assert_envelope(resp, 400, "validation_error")


async def test_the_largest_page_is_answered_empty(client, actor) -> None:
    resp = await client.get(PLANS, params={"page": 2**31 - 1}, headers=actor.in_org())
    assert resp.status_code == 200
    assert resp.json()["data"] == []


async def test_a_sort_index_beyond_an_integer_column_is_a_400(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {}}])
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    body = {"milestone": {}, "sortIndex": 2**31}
    assert_envelope(await post(client, actor, f"/{pid}/milestones", body), 400, "validation_error")
    resp = await patch(client, actor, f"/{pid}/milestones/{mid}", {"sortIndex": 2**31})
    assert_envelope(resp, 400, "validation_error")
    resp = await patch(client, actor, f"/{pid}/milestones/{mid}", {"sortIndex": 2**31 - 1})
    assert resp.status_code == 200 and resp.json()["sortIndex"] == 2**31 - 1


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"])
async def test_a_number_that_is_not_a_finite_double_is_a_400(client, db, actor, raw) -> None:
    plan = await new_plan(client, db, actor)
    for field in ("target", "actualValue", "progress"):
        content = f'{{"title": "g", "{field}": {raw}}}'
        resp = await client.post(
            f"{PLANS}/{plan['id']}/goals",
            content=content,
            headers=actor.in_org() | {"Content-Type": "application/json"},
        )
        assert_envelope(resp, 400, "validation_error")


async def test_an_integer_beyond_64_bits_anywhere_in_a_body_is_a_400(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    resp = await post(client, actor, f"/{plan['id']}/milestones", {"milestone": {"n": 2**64}})
    assert_envelope(resp, 400, "validation_error")
    resp = await post(client, actor, f"/{plan['id']}/goals", {"title": "g", "target": 10**400})
    assert_envelope(resp, 400, "validation_error")
