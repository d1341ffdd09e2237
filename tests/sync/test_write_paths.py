"""Every write a client could need to sync moves the row's `updatedAt`, so that a poller with
`updatedSince` sees it (issue 31): creates, replaces, patches, archives, restores, the bulk
create and the CSV importer's bulk path (one multi-row INSERT each), and a plan's milestones,
goals and tasks, which the API shows inside the plan (getPlan), including updatePlanTask's
one-statement fast path on PostgreSQL and its transaction path."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from salesplan.auth.principal import RequestContext
from salesplan.contacts import service as contacts
from tests.fixtures.factories import Actor
from tests.sync.lists import API, after

Write = Callable[[], Awaitable[httpx.Response]]


async def changed_since(
    client: httpx.AsyncClient, actor: Actor, path: str, since: str
) -> dict[str, dict[str, Any]]:
    """The rows of a list (archived ones too) whose updatedAt is after `since`, by id."""
    resp = await client.get(
        API + path,
        params={"updatedSince": after(since), "includeArchived": "true", "pageSize": 200},
        headers=actor.in_org(),
    )
    assert resp.status_code == 200, resp.text
    return {row["id"]: row for row in resp.json()["data"]}


async def assert_bumps(
    client: httpx.AsyncClient,
    actor: Actor,
    path: str,
    row: dict[str, Any],
    writes: dict[str, Write],
    expected: tuple[int, ...] = (200, 201, 204),
) -> None:
    """Each write, in turn, moves `row`'s updatedAt past its value before the write, and the
    list with updatedSince shows the row."""
    since = row["updatedAt"]
    for what, write in writes.items():
        resp = await write()
        assert resp.status_code in expected, (what, resp.status_code, resp.text)
        seen = await changed_since(client, actor, path, since)
        assert row["id"] in seen, f"{what} did not move updatedAt"
        assert seen[row["id"]]["updatedAt"] > since, what
        since = seen[row["id"]]["updatedAt"]


async def post(client: httpx.AsyncClient, actor: Actor, path: str, body: Any) -> httpx.Response:
    return await client.post(API + path, json=body, headers=actor.in_org())


async def test_account_writes_move_updated_at(client, actor) -> None:
    before = (await post(client, actor, "/accounts", {"name": "Before"})).json()
    created = (await post(client, actor, "/accounts", {"name": "Acme"})).json()
    assert created["id"] in await changed_since(client, actor, "/accounts", before["updatedAt"])
    url, h = f"{API}/accounts/{created['id']}", actor.in_org()
    await assert_bumps(
        client,
        actor,
        "/accounts",
        created,
        {
            "updateAccount": lambda: client.put(url, json={"name": "Acme 2"}, headers=h),
            "patchAccount": lambda: client.patch(url, json={"industry": "Tools"}, headers=h),
            "deleteAccount": lambda: client.delete(url, headers=h),
        },
    )


async def test_bulk_create_stamps_every_row(client, actor) -> None:
    before = (await post(client, actor, "/accounts", {"name": "Before"})).json()
    resp = await post(
        client, actor, "/accounts/bulk", {"accounts": [{"name": f"B{i}"} for i in range(30)]}
    )
    assert resp.status_code == 207, resp.text
    made = {r["data"]["id"] for r in resp.json()["results"]}
    assert len(made) == 30
    seen = await changed_since(client, actor, "/accounts", before["updatedAt"])
    assert set(seen) == made
    # One statement, one instant: all thirty share their updatedAt (the ties the keyset sort
    # breaks by id).
    assert len({row["updatedAt"] for row in seen.values()}) == 1


async def test_the_importers_bulk_contacts_are_stamped(client, actor, app) -> None:
    account = (await post(client, actor, "/accounts", {"name": "Acme", "crmId": "A-1"})).json()
    before = (await post(client, actor, f"/accounts/{account['id']}/contacts", {})).json()
    ctx = RequestContext.internal(actor.org.id)
    async with app.state.sessionmaker() as session:
        result = await contacts.bulk_create_contacts(
            session,
            ctx,
            [{"accountCrmId": "A-1", "firstName": f"C{i}"} for i in range(5)]
            + [{"accountId": account["id"], "firstName": "By id"}],
        )
        await session.commit()
    assert result["created"] == 6
    for path in ("/contacts", f"/accounts/{account['id']}/contacts"):
        seen = await changed_since(client, actor, path, before["updatedAt"])
        assert {row["firstName"] for row in seen.values()} == {f"C{i}" for i in range(5)} | {
            "By id"
        }


async def test_contact_writes_move_updated_at(client, actor) -> None:
    acme = (await post(client, actor, "/accounts", {"name": "Acme"})).json()
    other = (await post(client, actor, "/accounts", {"name": "Other"})).json()
    contact = (
        await post(client, actor, f"/accounts/{acme['id']}/contacts", {"firstName": "Ada"})
    ).json()
    url, h = f"{API}/contacts/{contact['id']}", actor.in_org()
    await assert_bumps(
        client,
        actor,
        "/contacts",
        contact,
        {
            "updateContact": lambda: client.put(url, json={"firstName": "Ada L"}, headers=h),
            "patchContact": lambda: client.patch(url, json={"title": "CTO"}, headers=h),
            # Moving the contact changes only its accountId.
            "patchContact accountId": lambda: client.patch(
                url, json={"accountId": other["id"]}, headers=h
            ),
            "deleteContact": lambda: client.delete(url, headers=h),
        },
    )
    # The account it moved to lists it as changed.
    seen = await changed_since(
        client, actor, f"/accounts/{other['id']}/contacts", contact["updatedAt"]
    )
    assert contact["id"] in seen


async def test_opportunity_writes_move_updated_at(client, actor) -> None:
    acme = (await post(client, actor, "/accounts", {"name": "Acme"})).json()
    opp = (
        await post(client, actor, "/opportunities", {"accountId": acme["id"], "name": "Deal"})
    ).json()
    url, h = f"{API}/opportunities/{opp['id']}", actor.in_org()
    body = {"accountId": acme["id"], "name": "Deal 2", "stage": "won"}
    await assert_bumps(
        client,
        actor,
        "/opportunities",
        opp,
        {
            "updateOpportunity": lambda: client.put(url, json=body, headers=h),
            "patchOpportunity": lambda: client.patch(url, json={"amount": "12.50"}, headers=h),
            "deleteOpportunity": lambda: client.delete(url, headers=h),
        },
    )


async def test_lead_writes_move_updated_at(client, actor) -> None:
    lead = (await post(client, actor, "/leads", {"firstName": "Lea"})).json()
    url, h = f"{API}/leads/{lead['id']}", actor.in_org()
    await assert_bumps(
        client,
        actor,
        "/leads",
        lead,
        {
            "updateLead": lambda: client.patch(url, json={"status": "working"}, headers=h),
            "deleteLead": lambda: client.delete(url, headers=h),
        },
    )


async def test_plan_writes_and_its_childrens_move_the_plans_updated_at(client, actor) -> None:
    plan = (await post(client, actor, "/plans", {"name": "Plan", "entityType": "USER"})).json()
    pid, h = plan["id"], actor.in_org()
    p = f"{API}/plans/{pid}"
    ids: dict[str, str] = {}

    async def create(kind: str, body: dict[str, Any]) -> httpx.Response:
        resp = await client.post(f"{p}/{kind.replace('first', 'milestones')}", json=body, headers=h)
        if resp.status_code == 201:
            ids[kind] = resp.json()["id"]
        return resp

    def child(kind: str) -> str:
        return f"{p}/{kind}/{ids[kind]}"

    await assert_bumps(
        client,
        actor,
        "/plans",
        plan,
        {
            "updatePlan": lambda: client.patch(p, json={"description": "d"}, headers=h),
            "createPlanMilestone": lambda: create("milestones", {"milestone": {"name": "M"}}),
            "updatePlanMilestone": lambda: client.patch(
                child("milestones"), json={"status": "in_progress"}, headers=h
            ),
            "createPlanMilestone again": lambda: create("first", {"milestone": {"name": "F"}}),
            "reorderPlanMilestones": lambda: client.post(
                f"{p}/milestones/reorder",
                json={"milestoneIds": [ids["first"], ids["milestones"]]},
                headers=h,
            ),
            "createPlanGoal": lambda: create("goals", {"title": "G"}),
            "updatePlanGoal": lambda: client.patch(child("goals"), json={"title": "G2"}, headers=h),
            "archivePlanGoal": lambda: client.delete(child("goals"), headers=h),
            "restorePlanGoal": lambda: client.post(f"{child('goals')}/restore", headers=h),
            "createPlanTask": lambda: create("tasks", {"title": "T"}),
            # One statement on PostgreSQL (update_task_at_once), SQLite's transaction path.
            "updatePlanTask": lambda: client.patch(
                child("tasks"), json={"completed": True}, headers=h
            ),
            # A reference to check: the transaction path on both engines.
            "updatePlanTask assignee": lambda: client.patch(
                child("tasks"), json={"assignedToId": str(actor.user.id)}, headers=h
            ),
            "archivePlanTask": lambda: client.delete(child("tasks"), headers=h),
            "archivePlanMilestone": lambda: client.delete(child("milestones"), headers=h),
            "restorePlanMilestone": lambda: client.post(
                f"{child('milestones')}/restore", headers=h
            ),
            "archivePlan": lambda: client.delete(p, headers=h),
            "restorePlan": lambda: client.post(f"{p}/restore", headers=h),
        },
    )
