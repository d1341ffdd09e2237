"""Plans rules for app principals (client-credentials tokens, not user-backed)."""

from __future__ import annotations

import httpx

from tests.fixtures.crm import make_account
from tests.fixtures.envelope import assert_envelope
from tests.oauth.conftest import make_oauth_app


async def app_token(client: httpx.AsyncClient, db, actor) -> dict[str, str]:  # type: ignore[no-untyped-def]
    machine = await make_oauth_app(
        db,
        actor,
        grant_types=["client_credentials"],
        scopes=["plans:read", "plans:write"],
        organization_ids=[actor.org.id],
    )
    response = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": "plans:read plans:write"},
        auth=(machine.app.client_id, machine.secret),
    )
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


async def test_personal_plan_without_entity_id_needs_a_user_backed_token(client, db, actor) -> None:
    headers = await app_token(client, db, actor)
    response = await client.post(
        "/api/v1/plans", json={"name": "Mine", "entityType": "USER"}, headers=headers
    )
    error = assert_envelope(response, 403, "forbidden")
    assert error["details"]["reason"] == "user_token_required"


async def test_my_tasks_needs_a_user_backed_token(client, db, actor) -> None:
    headers = await app_token(client, db, actor)
    error = assert_envelope(await client.get("/api/v1/tasks", headers=headers), 403, "forbidden")
    assert error["details"]["reason"] == "user_token_required"


async def test_tasks_created_by_an_app_have_no_creator(client, db, actor) -> None:
    headers = await app_token(client, db, actor)
    account, group = await make_account(db, actor.org.id)
    plan = await client.post(
        "/api/v1/plans",
        json={"name": "Rollout", "entityType": "ACCOUNT", "entityId": str(account.id)},
        headers=headers,
    )
    assert plan.status_code == 201, plan.text
    assert plan.json()["buyingGroupId"] == str(group.id)
    task = await client.post(
        f"/api/v1/plans/{plan.json()['id']}/tasks", json={"title": "Sync"}, headers=headers
    )
    assert task.status_code == 201 and task.json()["createdById"] is None
