"""Concurrent writes (issue 18, defects 2-5, and duplicate crmId): requests run at the same
time, each on its own connection and transaction, through the HTTP API. On both engines:
PostgreSQL runs them in parallel (row locks), SQLite interleaves them between statements
(its writer lock); each test failed on both before the fix."""

from __future__ import annotations

import asyncio
import itertools
import random

from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import make_key
from tests.plans.helpers import PLANS, new_plan

MAPS = "/api/v1/relationship-maps"


async def _map_with_contacts(client, db, actor, n: int):
    account, group = await make_account(db, actor.org.id)
    contacts = [await make_contact(db, account, first=f"C{i}") for i in range(n)]
    await db.commit()
    body = {"entityType": "Account", "entityId": str(account.id)}
    resp = await client.post(MAPS, json=body, headers=actor.in_org())
    assert resp.status_code == 201, resp.text
    return resp.json()["buyerMap"]["id"], contacts, group


async def test_parallel_contact_upserts_on_one_map_keep_every_node(client, db, actor) -> None:
    map_id, contacts, _ = await _map_with_contacts(client, db, actor, 20)
    responses = await asyncio.gather(
        *(
            client.patch(
                f"{MAPS}/{map_id}/contacts/{c.id}",
                json={"supportStatus": "champion"},
                headers=actor.in_org(),
            )
            for c in contacts
        )
    )
    assert [r.status_code for r in responses] == [200] * len(contacts)
    final = (await client.get(f"{MAPS}/{map_id}", headers=actor.in_org())).json()["buyerMap"]
    node_ids = {n["id"] for n in final["map"]["nodes"]}
    assert node_ids == {str(c.id) for c in contacts}
    assert len(final["contacts"]) == len(contacts)


async def test_parallel_upserts_of_placed_contacts_each_see_their_own_write(
    client, db, actor
) -> None:
    """Contacts already placed (PostgreSQL: the one-statement write, the map's lock held for
    that statement only): every answer holds every placed contact and its own change, and
    no change is lost."""
    map_id, contacts, _ = await _map_with_contacts(client, db, actor, 12)
    for c in contacts:
        resp = await client.patch(
            f"{MAPS}/{map_id}/contacts/{c.id}", json={}, headers=actor.in_org()
        )
        assert resp.status_code == 200, resp.text
    responses = await asyncio.gather(
        *(
            client.patch(
                f"{MAPS}/{map_id}/contacts/{c.id}",
                json={"functionalRole": f"R{i}"},
                headers=actor.in_org(),
            )
            for i, c in enumerate(contacts)
        )
    )
    assert [r.status_code for r in responses] == [200] * len(contacts)
    seen = []
    for i, (c, resp) in enumerate(zip(contacts, responses, strict=True)):
        placed = {p["contactId"]: p for p in resp.json()["buyerMap"]["contacts"]}
        assert set(placed) == {str(x.id) for x in contacts}
        assert placed[str(c.id)]["functionalRole"] == f"R{i}"
        seen.append({k for k, p in placed.items() if p["functionalRole"] is not None})
    # The writes went one by one (the map's lock), and each answer is the map as it was at
    # one moment after its own write: the first k writes, for some k. So the answers' sets
    # of changed contacts nest; one that missed a write committed ahead of its own would not.
    seen.sort(key=len)
    assert all(a <= b for a, b in itertools.pairwise(seen)), seen
    final = (await client.get(f"{MAPS}/{map_id}", headers=actor.in_org())).json()["buyerMap"]
    assert {p["contactId"]: p["functionalRole"] for p in final["contacts"]} == {
        str(c.id): f"R{i}" for i, c in enumerate(contacts)
    }
    assert len(final["map"]["nodes"]) == len(contacts)


async def test_parallel_upserts_of_one_contact_with_a_buying_group_all_succeed(
    client, db, actor
) -> None:
    map_id, contacts, group = await _map_with_contacts(client, db, actor, 1)
    path = f"{MAPS}/{map_id}/contacts/{contacts[0].id}"
    # Five keys of the same user: fifty writes within the rate limit of each token's bucket.
    keys = [await make_key(db, actor.user) for _ in range(5)]
    headers = [
        {"Authorization": f"Bearer {k}", "X-Organization-Id": str(actor.org.id)} for k in keys
    ]
    responses = await asyncio.gather(
        *(
            client.patch(path, json={"buyingGroupId": str(group.id)}, headers=headers[i % 5])
            for i in range(50)
        )
    )
    assert sorted({r.status_code for r in responses}) == [200]
    members = await client.get(f"/api/v1/buying-groups/{group.id}", headers=actor.in_org())
    assert members.status_code == 200


async def test_parallel_milestone_reorders_leave_a_permutation(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {}} for _ in range(8)])
    ids = [m["id"] for m in plan["milestones"]]
    rng = random.Random(18)
    orders = [rng.sample(ids, len(ids)) for _ in range(30)]
    responses = await asyncio.gather(
        *(
            client.post(
                f"{PLANS}/{plan['id']}/milestones/reorder",
                json={"milestoneIds": order},
                headers=actor.in_org(),
            )
            for order in orders
        )
    )
    assert {r.status_code for r in responses} == {200}
    final = (await client.get(f"{PLANS}/{plan['id']}", headers=actor.in_org())).json()
    indexes = sorted(m["sortIndex"] for m in final["milestones"])
    assert indexes == list(range(8))
    by_index = [m["id"] for m in sorted(final["milestones"], key=lambda m: m["sortIndex"])]
    assert by_index in orders


async def test_child_goals_created_while_the_parent_is_archived_never_stay_live(
    client, db, actor
) -> None:
    plan = await new_plan(client, db, actor, goals=[{"title": "parent"}])
    pid, parent = plan["id"], plan["goals"][0]["id"]
    creates = [
        client.post(
            f"{PLANS}/{pid}/goals",
            json={"title": f"child {i}", "parentGoalId": parent},
            headers=actor.in_org(),
        )
        for i in range(10)
    ]
    archive = client.delete(f"{PLANS}/{pid}/goals/{parent}", headers=actor.in_org())
    responses = await asyncio.gather(*creates[:5], archive, *creates[5:])
    assert responses[5].status_code == 204
    assert {r.status_code for r in responses[:5] + responses[6:]} <= {201, 422}
    live = await client.get(f"{PLANS}/{pid}/goals", headers=actor.in_org())
    assert live.status_code == 200
    assert [g for g in live.json()["data"] if g["parentGoalId"] == parent] == []


async def test_parallel_creates_with_one_crm_id_make_one_account(client, actor) -> None:
    responses = await asyncio.gather(
        *(
            client.post(
                "/api/v1/accounts",
                json={"name": f"Acme {i}", "crmId": "CRM-18"},
                headers=actor.in_org(),
            )
            for i in range(10)
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * 9
