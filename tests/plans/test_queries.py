"""getPlan loads any plan in a fixed number of SQL statements (contract §7 "a bounded number of
queries"), and listPlans with include= too."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from salesplan.plans.versioning import plan_bodies
from tests.plans.helpers import get, new_plan


@contextmanager
def counting(engine) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


def of_the_route(statements: list[str]) -> list[str]:
    """The statements of the route itself: without the API key's lookup, which the principal
    cache skips for a few seconds only (a slow machine sees it expire between two requests)."""
    return [s for s in statements if "api_keys" not in s]


def _big(milestones: int, goals: int, tasks: int) -> dict:
    return {
        "milestones": [
            {
                "milestone": {"name": f"m{i}"},
                "goals": [{"title": f"g{i}", "childGoals": [{"title": "child"}]}]
                if i < goals
                else [],
                "tasks": [{"title": f"t{i}-{j}"} for j in range(tasks // max(milestones, 1))],
            }
            for i in range(milestones)
        ]
    }


async def _count_get(client, actor, app, plan_id: str) -> int:
    """Statements of a getPlan that renders the plan (its body not cached)."""
    await get(client, actor, f"/{plan_id}")  # warm: the key's last-used stamp is written once
    plan_bodies(app).clear()
    with counting(app.state.engine) as statements:
        resp = await get(client, actor, f"/{plan_id}")
    assert resp.status_code == 200
    return len(of_the_route(statements))


async def test_get_plan_runs_the_same_number_of_queries_for_1_and_300_tasks(
    client, db, actor, app
) -> None:
    small = await new_plan(client, db, actor, tasks=[{"title": "only"}])
    big = await new_plan(client, db, actor, **_big(20, 20, 300))
    assert len(big["tasks"]) == 300 and len(big["milestones"]) == 20
    assert await _count_get(client, actor, app, small["id"]) == await _count_get(
        client, actor, app, big["id"]
    )


async def test_list_plans_with_children_runs_a_fixed_number_of_queries(
    client, db, actor, app
) -> None:
    await new_plan(client, db, actor, tasks=[{"title": "only"}])

    async def count() -> int:
        await get(client, actor, "", include="milestones,goals,tasks")
        with counting(app.state.engine) as statements:
            await get(client, actor, "", include="milestones,goals,tasks")
        return len(of_the_route(statements))

    one = await count()
    for _ in range(3):
        await new_plan(client, db, actor, **_big(3, 3, 9))
    assert await count() == one
