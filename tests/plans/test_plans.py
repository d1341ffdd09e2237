"""Plans: creation and entity resolution, lists and filters, reads, archiving (contract §7)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from tests.fixtures.crm import make_account, make_buying_group, make_opportunity
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor, make_key, make_org, make_user
from tests.plans import schemas
from tests.plans.helpers import PLANS, delete, get, new_plan, patch, post

ALL_KEYS = set(schemas.PLAN["properties"])


async def test_every_plans_response_is_validated_against_the_strict_schemas(
    client, db, actor
) -> None:
    before = schemas.VALIDATED["count"]
    await new_plan(client, db, actor)
    await get(client, actor, "")
    assert schemas.VALIDATED["count"] == before + 2


async def test_a_plan_renders_exactly_the_spec_properties_with_nulls_present(
    client, db, actor
) -> None:
    plan = await new_plan(client, db, actor, description=None)
    assert set(plan) == ALL_KEYS
    assert plan["description"] is None and plan["opportunityId"] is None
    assert plan["userId"] is None
    assert plan["milestones"] == [] and plan["goals"] == [] and plan["tasks"] == []
    assert plan["createdAt"].endswith("Z")


async def test_account_plans_are_stored_on_the_default_buying_group(client, db, actor) -> None:
    account, group = await make_account(db, actor.org.id)
    plan = await new_plan(client, db, actor, entityType="ACCOUNT", entityId=str(account.id))
    assert plan["entityType"] == "BUYING_GROUP"
    assert plan["entityId"] == plan["buyingGroupId"] == str(group.id)


async def test_buying_group_plans_set_buying_group_id(client, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id)
    champions = await make_buying_group(db, account)
    plan = await new_plan(client, db, actor, entityType="BUYING_GROUP", entityId=str(champions.id))
    assert plan["entityType"] == "BUYING_GROUP" and plan["buyingGroupId"] == str(champions.id)


async def test_opportunity_plans_set_opportunity_id(client, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id)
    opp = await make_opportunity(db, account)
    plan = await new_plan(client, db, actor, entityType="OPPORTUNITY", entityId=str(opp.id))
    assert plan["entityType"] == "OPPORTUNITY"
    assert plan["entityId"] == plan["opportunityId"] == str(opp.id)
    assert plan["buyingGroupId"] is None


async def test_user_plans_belong_to_the_named_member(client, db, actor) -> None:
    teammate = await make_user(db, actor.org)
    plan = await new_plan(client, db, actor, entityType="USER", entityId=str(teammate.id))
    assert plan["entityType"] == "USER" and plan["entityId"] == plan["userId"] == str(teammate.id)


async def test_user_plans_without_entity_id_belong_to_the_caller(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, entityType="USER")
    assert plan["userId"] == plan["entityId"] == str(actor.user.id)


async def test_user_plan_of_a_non_member_is_unprocessable(client, db, actor) -> None:
    other_org = await make_org(db)
    stranger = await make_user(db, other_org)
    resp = await post(
        client, actor, "", {"name": "x", "entityType": "USER", "entityId": str(stranger.id)}
    )
    body = assert_envelope(resp, 422, "unprocessable")
    assert body["details"]["field"] == "entityId"


async def test_a_missing_referenced_entity_is_unprocessable(client, db, actor) -> None:
    for entity_type in ("ACCOUNT", "BUYING_GROUP", "OPPORTUNITY"):
        resp = await post(
            client,
            actor,
            "",
            {"name": "x", "entityType": entity_type, "entityId": str(uuid.uuid4())},
        )
        body = assert_envelope(resp, 422, "unprocessable")
        assert body["details"]["field"] == "entityId"


async def test_another_organizations_entity_is_unprocessable(client, db, actor) -> None:
    other = await make_org(db)
    account, _ = await make_account(db, other.id)
    resp = await post(
        client, actor, "", {"name": "x", "entityType": "ACCOUNT", "entityId": str(account.id)}
    )
    assert_envelope(resp, 422, "unprocessable")


async def test_entity_id_is_required_except_for_user_plans(client, db, actor) -> None:
    resp = await post(client, actor, "", {"name": "x", "entityType": "ACCOUNT"})
    assert_envelope(resp, 400, "validation_error")


async def test_create_plan_body_is_strict(client, db, actor) -> None:
    _, group = await make_account(db, actor.org.id)
    body = {"name": "x", "entityType": "BUYING_GROUP", "entityId": str(group.id), "color": "red"}
    assert_envelope(await post(client, actor, "", body), 400, "validation_error")
    body = {"name": "x", "entityType": "PORTFOLIO", "entityId": str(group.id)}
    assert_envelope(await post(client, actor, "", body), 400, "validation_error")


async def test_user_plan_for_the_caller_needs_a_user_backed_token(client, db, actor, app) -> None:
    from salesplan.auth.principal import Principal, RequestContext
    from salesplan.errors import Forbidden
    from salesplan.plans.service import resolve_entity

    app_principal = Principal(
        token_id=uuid.uuid4(),
        token_kind="oauth",
        scopes=frozenset(APPROVED_SCOPES),
        organization_ids=frozenset({actor.org.id}),
        app_id=uuid.uuid4(),
    )
    ctx = RequestContext(app_principal, actor.org.id)
    with pytest.raises(Forbidden) as raised:
        await resolve_entity(db, ctx, "USER", None)
    assert raised.value.details["reason"] == "user_token_required"


async def test_nested_creation_builds_the_whole_plan(client, db, actor) -> None:
    plan = await new_plan(
        client,
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "Discover"},
                "goals": [{"title": "Win", "childGoals": [{"title": "Sub"}]}],
                "tasks": [{"title": "Call"}],
            },
            {"milestone": {"name": "Close"}, "status": "completed"},
        ],
        goals=[{"title": "Loose goal"}],
        tasks=[{"title": "Loose task", "completed": True}],
    )
    first, second = plan["milestones"]
    assert [first["sortIndex"], second["sortIndex"]] == [0, 1]
    assert first["goals"][0]["title"] == "Win"
    assert first["goals"][0]["childGoals"][0]["title"] == "Sub"
    assert first["tasks"][0]["title"] == "Call"
    assert second["actualDate"] is not None
    assert {g["title"] for g in plan["goals"]} == {"Win", "Loose goal"}
    assert len(plan["tasks"]) == 2
    loose = next(t for t in plan["tasks"] if t["title"] == "Loose task")
    assert loose["completed"] and loose["completedAt"] is not None


async def test_a_failed_nested_creation_leaves_nothing_behind(client, db, actor) -> None:
    _, group = await make_account(db, actor.org.id)
    deep: dict = {"title": "L1"}
    node = deep
    for level in range(2, 7):
        node["childGoals"] = [{"title": f"L{level}"}]
        node = node["childGoals"][0]
    body = {
        "name": "Too deep",
        "entityType": "BUYING_GROUP",
        "entityId": str(group.id),
        "milestones": [{"milestone": {"name": "m"}, "tasks": [{"title": "t"}]}],
        "goals": [deep],
    }
    assert_envelope(await post(client, actor, "", body), 422, "unprocessable")
    for model in (Plan, PlanMilestone, PlanGoal, PlanTask):
        assert (await db.execute(select(func.count()).select_from(model))).scalar_one() == 0


async def test_get_plan_of_another_organization_is_not_found(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    other = await make_actor(db)
    resp = await client.get(f"{PLANS}/{plan['id']}", headers=other.in_org())
    assert_envelope(resp, 404, "not_found")


async def test_update_plan_changes_only_what_is_sent(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, description="keep")
    resp = await patch(client, actor, f"/{plan['id']}", {"name": "Renamed"})
    assert resp.status_code == 200
    assert resp.json()["name"] == "Renamed" and resp.json()["description"] == "keep"
    assert_envelope(
        await patch(client, actor, f"/{plan['id']}", {"name": None}), 400, "validation_error"
    )
    assert_envelope(
        await patch(client, actor, f"/{plan['id']}", {"archivedAt": None}), 400, "validation_error"
    )


async def test_update_plan_can_reattach_it(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    account, _ = await make_account(db, actor.org.id)
    opp = await make_opportunity(db, account)
    resp = await patch(
        client, actor, f"/{plan['id']}", {"entityType": "OPPORTUNITY", "entityId": str(opp.id)}
    )
    assert resp.json()["opportunityId"] == str(opp.id) and resp.json()["buyingGroupId"] is None


async def test_archiving_a_plan_hides_it_from_lists_but_not_from_get(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    assert (await delete(client, actor, f"/{plan['id']}")).status_code == 204
    assert (await delete(client, actor, f"/{plan['id']}")).status_code == 204
    assert (await get(client, actor, "")).json()["data"] == []
    assert (await get(client, actor, f"/{plan['id']}")).status_code == 200
    listed = (await get(client, actor, "", includeArchived="true")).json()["data"]
    assert [p["id"] for p in listed] == [plan["id"]]
    assert set(listed[0]) == ALL_KEYS


async def test_archived_only_lists_only_archived_plans(client, db, actor) -> None:
    kept = await new_plan(client, db, actor, name="kept")
    gone = await new_plan(client, db, actor, name="gone")
    await delete(client, actor, f"/{gone['id']}")
    data = (await get(client, actor, "", archivedOnly="true")).json()["data"]
    assert [p["id"] for p in data] == [gone["id"]]
    assert kept["id"] not in [p["id"] for p in data]


async def test_restoring_a_plan_answers_it(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    await delete(client, actor, f"/{plan['id']}")
    resp = await post(client, actor, f"/{plan['id']}/restore", None)
    assert resp.status_code == 200 and resp.json()["id"] == plan["id"]
    assert [p["id"] for p in (await get(client, actor, "")).json()["data"]] == [plan["id"]]


async def test_archiving_a_plan_needs_plans_delete(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    key = await make_key(db, actor.user, scopes=["plans:read", "plans:write"])
    resp = await client.delete(
        f"{PLANS}/{plan['id']}",
        headers={"Authorization": f"Bearer {key}", "X-Organization-Id": str(actor.org.id)},
    )
    body = assert_envelope(resp, 403, "forbidden")
    assert body["details"]["requiredScope"] == "plans:delete"


async def test_archived_plan_children_cannot_be_written_until_restored(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {"name": "m"}}])
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    await delete(client, actor, f"/{pid}")
    for resp in (
        await post(client, actor, f"/{pid}/tasks", {"title": "t"}),
        await post(client, actor, f"/{pid}/goals", {"title": "g"}),
        await post(client, actor, f"/{pid}/milestones", {"milestone": {}}),
        await patch(client, actor, f"/{pid}/milestones/{mid}", {"status": "completed"}),
        await delete(client, actor, f"/{pid}/milestones/{mid}"),
    ):
        assert_envelope(resp, 422, "unprocessable")
    assert (await get(client, actor, f"/{pid}/milestones/{mid}")).status_code == 200
    await post(client, actor, f"/{pid}/restore", None)
    assert (await post(client, actor, f"/{pid}/tasks", {"title": "t"})).status_code == 201


# --- listPlans ------------------------------------------------------------------------------


async def test_list_items_carry_empty_children_unless_included(client, db, actor) -> None:
    await new_plan(
        client, db, actor, milestones=[{"milestone": {"name": "m"}}], tasks=[{"title": "t"}]
    )
    item = (await get(client, actor, "")).json()["data"][0]
    assert item["milestones"] == [] and item["goals"] == [] and item["tasks"] == []
    item = (await get(client, actor, "", include="tasks")).json()["data"][0]
    assert len(item["tasks"]) == 1 and item["milestones"] == []
    item = (await get(client, actor, "", include="milestones,goals,tasks")).json()["data"][0]
    assert len(item["milestones"]) == 1


async def test_a_bad_include_value_is_a_validation_error(client, db, actor) -> None:
    assert_envelope(await get(client, actor, "", include="owners"), 400, "validation_error")


async def test_get_plan_takes_include_and_answers_the_plan_whole(client, db, actor) -> None:
    """Contract §17 calls `client.plans.get(plan_id, include=[…])`: getPlan takes the list's
    `include` (checked: a bad value is a 400) and answers the plan in full whatever it says."""
    plan = await new_plan(
        client, db, actor, milestones=[{"milestone": {"name": "M"}, "tasks": [{"title": "T"}]}]
    )
    for include in ("milestones,goals,tasks", "tasks"):
        body = (await get(client, actor, f"/{plan['id']}", include=include)).json()
        assert len(body["milestones"]) == 1 and len(body["tasks"]) == 1, include
    bad = await get(client, actor, f"/{plan['id']}", include="owners")
    assert_envelope(bad, 400, "validation_error")


async def test_list_filter_entity_type_account_gives_the_accounts_buying_group_plans(
    client, db, actor
) -> None:
    account, group = await make_account(db, actor.org.id)
    champions = await make_buying_group(db, account)
    opp = await make_opportunity(db, account)
    a = await new_plan(client, db, actor, entityType="ACCOUNT", entityId=str(account.id))
    b = await new_plan(client, db, actor, entityType="BUYING_GROUP", entityId=str(champions.id))
    await new_plan(client, db, actor, entityType="OPPORTUNITY", entityId=str(opp.id))
    await new_plan(client, db, actor)  # another account
    for params in (
        {"entityType": "ACCOUNT", "entityId": str(account.id)},
        {"entityType": "ACCOUNT", "accountId": str(account.id)},
    ):
        data = (await get(client, actor, "", **params)).json()["data"]
        assert {p["id"] for p in data} == {a["id"], b["id"]}
    assert group.id


async def test_list_filter_account_id_alone_gives_every_plan_of_the_account(
    client, db, actor
) -> None:
    account, _ = await make_account(db, actor.org.id)
    opp = await make_opportunity(db, account)
    a = await new_plan(client, db, actor, entityType="ACCOUNT", entityId=str(account.id))
    o = await new_plan(client, db, actor, entityType="OPPORTUNITY", entityId=str(opp.id))
    await new_plan(client, db, actor)
    data = (await get(client, actor, "", accountId=str(account.id))).json()["data"]
    assert {p["id"] for p in data} == {a["id"], o["id"]}


async def test_list_filter_entity_type_and_id_match_stored_values(client, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id)
    opp = await make_opportunity(db, account)
    o = await new_plan(client, db, actor, entityType="OPPORTUNITY", entityId=str(opp.id))
    u = await new_plan(client, db, actor, entityType="USER")
    data = (await get(client, actor, "", entityType="USER")).json()["data"]
    assert [p["id"] for p in data] == [u["id"]]
    data = (await get(client, actor, "", entityId=str(opp.id))).json()["data"]
    assert [p["id"] for p in data] == [o["id"]]
    data = (await get(client, actor, "", entityType="OPPORTUNITY", entityId=str(opp.id))).json()[
        "data"
    ]
    assert [p["id"] for p in data] == [o["id"]]


async def test_list_search_matches_the_name_case_insensitively(client, db, actor) -> None:
    hit = await new_plan(client, db, actor, name="Q4 Expansion 100%")
    await new_plan(client, db, actor, name="Renewal")
    data = (await get(client, actor, "", search="expansion 100%")).json()["data"]
    assert [p["id"] for p in data] == [hit["id"]]


async def test_list_sorts_by_name_in_both_orders(client, db, actor) -> None:
    for name in ("b", "c", "a"):
        await new_plan(client, db, actor, name=name)
    asc = (await get(client, actor, "", sortBy="name")).json()["data"]
    desc = (await get(client, actor, "", sortBy="name", order="desc")).json()["data"]
    assert [p["name"] for p in asc] == ["a", "b", "c"]
    assert [p["name"] for p in desc] == ["c", "b", "a"]


async def test_list_sort_by_an_unknown_key_is_a_validation_error(client, db, actor) -> None:
    assert_envelope(await get(client, actor, "", sortBy="entityType"), 400, "validation_error")


async def test_list_pages_and_cursors(client, db, actor) -> None:
    ids = [(await new_plan(client, db, actor, name=f"p{i}"))["id"] for i in range(5)]
    page = (await get(client, actor, "", pageSize=2, page=3)).json()
    assert page["pagination"] == {
        "hasNextPage": False,
        "totalCount": 5,
        "page": 3,
        "pageSize": 2,
        "totalPages": 3,
    }
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        body = (await get(client, actor, "", **params)).json()
        seen += [p["id"] for p in body["data"]]
        if not body["pagination"]["hasNextPage"]:
            assert "nextCursor" not in body["pagination"]
            break
        cursor = body["pagination"]["nextCursor"]
    assert seen == ids


async def test_nested_children_may_carry_null_links(client, db, actor) -> None:
    plan = await new_plan(
        client,
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "m"},
                "goals": [{"title": "g", "milestoneId": None, "parentGoalId": None}],
                "tasks": [{"title": "t", "milestoneId": None}],
            }
        ],
    )
    milestone = plan["milestones"][0]
    assert milestone["goals"][0]["milestoneId"] == milestone["id"]
    assert milestone["tasks"][0]["milestoneId"] == milestone["id"]
