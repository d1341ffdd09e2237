"""Milestone owner ids exist in the caller's organization (issue 18, defect 15): prospect
owners are contacts of the plan's account (contract §16), subscriber owners its users; anything
else is a 422."""

from __future__ import annotations

import uuid

from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor
from tests.plans.helpers import PLANS, new_plan, patch, post


async def test_owner_ids_of_another_organization_are_a_422(client, db, actor) -> None:
    other = await make_actor(db)
    account, _ = await make_account(db, other.org.id)
    foreign_contact = await make_contact(db, account)
    await db.commit()
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {}}])
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    for field, value in (
        ("subscriberOwnerIds", other.user.id),
        ("prospectOwnerIds", foreign_contact.id),
        ("subscriberOwnerIds", uuid.uuid4()),
    ):
        body = {"milestone": {}, field: [str(value)]}
        resp = await post(client, actor, f"/{pid}/milestones", body)
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == field
        resp = await patch(client, actor, f"/{pid}/milestones/{mid}", {field: [str(value)]})
        assert_envelope(resp, 422, "unprocessable")
    _, group = await make_account(db, actor.org.id)
    body = {
        "name": "p",
        "entityType": "BUYING_GROUP",
        "entityId": str(group.id),
        "milestones": [{"milestone": {}, "subscriberOwnerIds": [str(other.user.id)]}],
    }
    resp = await client.post(PLANS, json=body, headers=actor.in_org())
    assert_envelope(resp, 422, "unprocessable")


async def test_owner_ids_of_the_organization_are_stored(client, db, actor) -> None:
    # Contract §16: prospect owners are contacts of the plan's account.
    account, group = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    await db.commit()
    plan = await new_plan(client, db, actor, entityType="BUYING_GROUP", entityId=str(group.id))
    body = {
        "milestone": {},
        "prospectOwnerIds": [str(contact.id)],
        "subscriberOwnerIds": [str(actor.user.id)],
    }
    resp = await post(client, actor, f"/{plan['id']}/milestones", body)
    assert resp.status_code == 201
    assert resp.json()["prospectOwnerIds"] == [str(contact.id)]
    assert resp.json()["subscriberOwnerIds"] == [str(actor.user.id)]
