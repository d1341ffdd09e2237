"""Plans, tasks and relationship-map tools: each answers the body of the REST operation of the
same name, over real HTTP with the SDK's client."""

from __future__ import annotations

import httpx2

from salesplan.oauth.apps import create_oauth_app
from tests.fixtures.crm import make_account, make_buying_group, make_contact, make_opportunity
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, error, rest, rest_body


async def test_create_plan_on_an_account_goes_to_its_default_buying_group(mcp, db):
    actor = await make_actor(db)
    account, default = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        plan = body(
            await client.call_tool(
                "createPlan",
                {
                    "name": "Acme FY27",
                    "entityType": "ACCOUNT",
                    "entityId": str(account.id),
                    "milestones": [
                        {"milestone": {"name": "Discovery"}, "tasks": [{"title": "Map roles"}]}
                    ],
                    "goals": [{"title": "Revenue", "target": 100, "actualValue": 25}],
                },
            )
        )
        read = body(await client.call_tool("getPlan", {"planId": plan["id"]}))
    assert plan["entityType"] == "BUYING_GROUP"
    assert plan["entityId"] == plan["buyingGroupId"] == str(default.id)
    assert read == plan == await rest_body(mcp, actor.key, f"/plans/{plan['id']}")
    assert [m["milestone"]["name"] for m in plan["milestones"]] == ["Discovery"]
    assert [t["title"] for t in plan["milestones"][0]["tasks"]] == ["Map roles"]
    assert plan["goals"][0]["progress"] == 25.0


async def test_create_plan_on_a_non_default_buying_group_after_listing_them(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    champions = await make_buying_group(db, account, "Champions")
    async with connect(mcp.url, actor.key) as client:
        groups = body(
            await client.call_tool("listAccountBuyingGroups", {"accountId": str(account.id)})
        )
        chosen = next(g for g in groups["data"] if not g["isDefault"])
        plan = body(
            await client.call_tool(
                "createPlan",
                {"name": "Champions", "entityType": "BUYING_GROUP", "entityId": chosen["id"]},
            )
        )
    assert plan["buyingGroupId"] == str(champions.id)


async def test_create_plan_without_entity_id_is_a_validation_error(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        err = error(await client.call_tool("createPlan", {"name": "X", "entityType": "ACCOUNT"}))
        missing = error(
            await client.call_tool(
                "createPlan",
                {"name": "X", "entityType": "ACCOUNT", "entityId": str(actor.org.id)},
            )
        )
    assert err["code"] == "validation_error"
    assert missing["code"] == "unprocessable"


async def test_list_plans_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    opp = await make_opportunity(db, account)
    async with connect(mcp.url, actor.key) as client:
        for entity_type, entity_id in (("ACCOUNT", account.id), ("OPPORTUNITY", opp.id)):
            await client.call_tool(
                "createPlan",
                {
                    "name": f"Plan {entity_type}",
                    "entityType": entity_type,
                    "entityId": str(entity_id),
                    "tasks": [{"title": "Call"}],
                },
            )
        listed = body(
            await client.call_tool(
                "listPlans", {"accountId": str(account.id), "include": "tasks", "sortBy": "name"}
            )
        )
    path = f"/plans?accountId={account.id}&include=tasks&sortBy=name"
    assert listed == await rest_body(mcp, actor.key, path)
    assert [p["name"] for p in listed["data"]] == ["Plan ACCOUNT", "Plan OPPORTUNITY"]
    assert [len(p["tasks"]) for p in listed["data"]] == [1, 1]


async def test_update_plan_changes_only_what_is_sent(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        plan = body(
            await client.call_tool(
                "createPlan",
                {
                    "name": "Old",
                    "description": "Keep me",
                    "entityType": "ACCOUNT",
                    "entityId": str(account.id),
                },
            )
        )
        updated = body(await client.call_tool("updatePlan", {"planId": plan["id"], "name": "New"}))
    assert updated == await rest_body(mcp, actor.key, f"/plans/{plan['id']}")
    assert updated["name"] == "New" and updated["description"] == "Keep me"


async def test_plan_task_tools_create_and_complete(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        plan = body(
            await client.call_tool(
                "createPlan", {"name": "P", "entityType": "ACCOUNT", "entityId": str(account.id)}
            )
        )
        task = body(
            await client.call_tool(
                "createPlanTask",
                {"planId": plan["id"], "title": "Send deck", "assignedToId": str(actor.user.id)},
            )
        )
        path = f"/plans/{plan['id']}/tasks/{task['id']}"
        assert task == await rest_body(mcp, actor.key, path)
        assert task["completed"] is False and task["createdById"] == str(actor.user.id)
        done = body(
            await client.call_tool(
                "updatePlanTask", {"planId": plan["id"], "taskId": task["id"], "completed": True}
            )
        )
    assert done == await rest_body(mcp, actor.key, path)
    assert done["completed"] is True and done["completedAt"] is not None
    assert done["title"] == "Send deck"  # PATCH: not sent, kept


async def test_list_my_tasks_with_a_user_backed_key(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        plan = body(
            await client.call_tool(
                "createPlan",
                {
                    "name": "P",
                    "entityType": "ACCOUNT",
                    "entityId": str(account.id),
                    "tasks": [
                        {"title": "Mine", "assignedToId": str(actor.user.id)},
                        {"title": "Nobody's"},
                    ],
                },
            )
        )
        mine = body(await client.call_tool("listMyTasks", {"completed": False}))
    assert mine == await rest_body(mcp, actor.key, "/tasks?completed=false")
    assert [(t["title"], t["planId"]) for t in mine["data"]] == [("Mine", plan["id"])]


async def test_list_my_tasks_refuses_an_app_token(mcp, db):
    actor = await make_actor(db)
    app, secret = await create_oauth_app(
        db, owner_user_id=actor.user.id, name="Sync", redirect_uris=[], scopes=["plans:read"]
    )
    await db.commit()
    origin = mcp.url.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        resp = await http.post(
            origin + "/api/v1/oauth/token",
            data={"grant_type": "client_credentials", "resource": mcp.app.state.settings.mcp_url},
            auth=(app.client_id, secret),
        )
    assert resp.status_code == 200, resp.text
    async with connect(mcp.url, resp.json()["access_token"]) as client:
        err = error(await client.call_tool("listMyTasks", {}))
    assert err["code"] == "forbidden"
    assert err["details"]["reason"] == "user_token_required"


# --- relationship maps -------------------------------------------------------------------------


async def test_relationship_map_tools_read_and_place_a_contact(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    champions = await make_buying_group(db, account, "Champions")
    contact = await make_contact(db, account, "Ada", "Lovelace")
    created = await rest(
        mcp,
        actor.key,
        "POST",
        "/relationship-maps",
        json={"entityType": "Account", "entityId": str(account.id)},
    )
    assert created.status_code == 201, created.text
    map_id = created.json()["buyerMap"]["id"]
    async with connect(mcp.url, actor.key) as client:
        read = body(await client.call_tool("getRelationshipMap", {"buyerMapId": map_id}))
        assert read == await rest_body(mcp, actor.key, f"/relationship-maps/{map_id}")
        found = body(
            await client.call_tool(
                "listRelationshipMaps", {"entityType": "Account", "entityId": str(account.id)}
            )
        )
        assert [m["id"] for m in found["data"]] == [map_id]
        assert found == await rest_body(
            mcp, actor.key, f"/relationship-maps?entityType=Account&entityId={account.id}"
        )
        placed = body(
            await client.call_tool(
                "upsertRelationshipMapContact",
                {
                    "buyerMapId": map_id,
                    "contactId": str(contact.id),
                    "supportStatus": "champion",
                    "buyingGroupId": str(champions.id),
                },
            )
        )
        changed = body(
            await client.call_tool(
                "upsertRelationshipMapContact",
                {"buyerMapId": map_id, "contactId": str(contact.id), "decisionStatus": "maker"},
            )
        )
        groups = body(await client.call_tool("listBuyingGroups", {"accountId": str(account.id)}))
    assert changed == await rest_body(mcp, actor.key, f"/relationship-maps/{map_id}")
    [entry] = changed["buyerMap"]["contacts"]
    assert (entry["supportStatus"], entry["decisionStatus"]) == ("champion", "maker")
    assert placed["buyerMap"]["map"]["nodes"][0]["id"] == str(contact.id)
    group = next(g for g in groups["data"] if g["id"] == str(champions.id))
    assert group["memberContactIds"] == [str(contact.id)]
