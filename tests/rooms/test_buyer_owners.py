"""Buyer-side owners (contract §16): a task's `assignedToId` may name a contact of the plan's
account (for a USER plan none qualifies), and `prospectOwnerIds` are contacts of that account."""

from __future__ import annotations

from tests.fixtures.crm import make_account, make_contact, make_opportunity
from tests.fixtures.envelope import assert_envelope
from tests.plans.helpers import PLANS, new_plan, patch, post


async def test_a_task_may_be_assigned_to_a_contact_of_the_plans_account(client, db, actor) -> None:
    account, group = await make_account(db, actor.org.id)
    buyer = await make_contact(db, account)
    plan = await new_plan(client, db, actor, entityType="BUYING_GROUP", entityId=str(group.id))
    resp = await post(
        client, actor, f"/{plan['id']}/tasks", {"title": "Sign", "assignedToId": str(buyer.id)}
    )
    assert resp.status_code == 201, resp.text
    assert resp.json()["assignedToId"] == str(buyer.id)
    task_id = resp.json()["id"]
    resp = await patch(
        client, actor, f"/{plan['id']}/tasks/{task_id}", {"assignedToId": str(actor.user.id)}
    )
    assert resp.status_code == 200 and resp.json()["assignedToId"] == str(actor.user.id)
    resp = await patch(
        client, actor, f"/{plan['id']}/tasks/{task_id}", {"assignedToId": str(buyer.id)}
    )
    assert resp.status_code == 200 and resp.json()["assignedToId"] == str(buyer.id)
    # An opportunity's plan: the opportunity's account.
    opportunity = await make_opportunity(db, account)
    opp_plan = await new_plan(
        client, db, actor, entityType="OPPORTUNITY", entityId=str(opportunity.id)
    )
    resp = await post(
        client, actor, f"/{opp_plan['id']}/tasks", {"title": "x", "assignedToId": str(buyer.id)}
    )
    assert resp.status_code == 201, resp.text
    # createPlan with nested tasks checks the same.
    resp = await client.post(
        PLANS,
        json={"name": "p", "entityType": "ACCOUNT", "entityId": str(account.id),
              "tasks": [{"title": "t", "assignedToId": str(buyer.id)}]},
        headers=actor.in_org(),
    )  # fmt: skip
    assert resp.status_code == 201, resp.text


async def test_a_contact_of_another_account_or_a_user_plan_is_a_422(client, db, actor) -> None:
    account, group = await make_account(db, actor.org.id)
    other, _ = await make_account(db, actor.org.id)
    stranger = await make_contact(db, other)
    plan = await new_plan(client, db, actor, entityType="BUYING_GROUP", entityId=str(group.id))
    user_plan = await new_plan(client, db, actor, entityType="USER", entityId=str(actor.user.id))
    buyer = await make_contact(db, account)
    for plan_id, contact in ((plan["id"], stranger), (user_plan["id"], buyer)):
        resp = await post(
            client, actor, f"/{plan_id}/tasks", {"title": "x", "assignedToId": str(contact.id)}
        )
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == "assignedToId"
        resp = await post(
            client,
            actor,
            f"/{plan_id}/milestones",
            {"milestone": {}, "prospectOwnerIds": [str(contact.id)]},
        )
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == "prospectOwnerIds"
    # An archived contact no longer qualifies.
    buyer.archived_at = buyer.created_at
    await db.commit()
    resp = await post(
        client, actor, f"/{plan['id']}/tasks", {"title": "x", "assignedToId": str(buyer.id)}
    )
    assert_envelope(resp, 422, "unprocessable")
    resp = await client.post(
        PLANS,
        json={"name": "p", "entityType": "BUYING_GROUP", "entityId": str(group.id),
              "milestones": [{"milestone": {}, "prospectOwnerIds": [str(stranger.id)]}]},
        headers=actor.in_org(),
    )  # fmt: skip
    assert_envelope(resp, 422, "unprocessable")
