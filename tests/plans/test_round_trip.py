from __future__ import annotations

from tests.plans.helpers import get, new_plan


async def test_get_plan_and_list_answer_what_create_plan_answered(client, db, actor) -> None:
    plan = await new_plan(
        client,
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "Discover"},
                "goals": [{"title": "g", "childGoals": [{"title": "c"}]}],
                "tasks": [{"title": "t"}],
            }
        ],
        goals=[{"title": "top"}],
        tasks=[{"title": "loose"}],
    )
    assert len(plan["milestones"]) == 1 and len(plan["tasks"]) == 2
    again = (await get(client, actor, f"/{plan['id']}")).json()
    assert again == plan
    listed = (await get(client, actor, "", include="milestones,goals,tasks")).json()
    assert listed["data"] == [plan]
