"""Goal moves (contract §7) as properties (issue 18): after any sequence of creates, moves
(`parentGoalId` patches) and archives, the server answered each as the rules say (a cycle or a
level deeper than 5 is a 422, anything else succeeds) and the plan's goal tree is exactly the
model's: every live goal once, under its parent."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.fixtures.factories import make_actor
from tests.plans.helpers import delete, get, new_plan, patch, post

MAX_DEPTH = 5

# (kind, a, b): a and b pick goals by index among the live ones in creation order (-1, the
# newest, often: it grows deep chains); b = None is "no parent".
OPS = st.lists(
    st.tuples(
        st.sampled_from(("create", "create", "create", "move", "archive")),
        st.integers(min_value=0, max_value=30),
        st.sampled_from((None, -1, -1, -1)) | st.integers(min_value=0, max_value=30),
    ),
    max_size=24,
)


class Model:
    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}

    def depth(self, goal: str) -> int:
        level, node = 1, self.parent[goal]
        while node is not None:
            level, node = level + 1, self.parent[node]
        return level

    def subtree(self, goal: str) -> set[str]:
        out = {goal}
        for child in [g for g, p in self.parent.items() if p == goal]:
            out |= self.subtree(child)
        return out

    def height(self, goal: str) -> int:
        children = [g for g, p in self.parent.items() if p == goal]
        return 1 + max((self.height(c) for c in children), default=0)

    def pick(self, index: int | None) -> str | None:
        if index is None or not self.parent:
            return None
        return list(self.parent)[index % len(self.parent)]


def _flatten(goals: list[dict[str, Any]], parent: str | None, out: dict[str, str | None]) -> None:
    for goal in goals:
        assert goal["id"] not in out, "a goal appears twice in the tree"
        assert goal["parentGoalId"] == parent
        out[goal["id"]] = parent
        _flatten(goal["childGoals"], goal["id"], out)


@settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
async def test_goal_moves_follow_the_cycle_and_depth_rules(client, db, ops) -> None:
    actor = await make_actor(db)
    pid = (await new_plan(client, db, actor))["id"]
    model = Model()
    for kind, a, b in ops:
        if kind == "create":
            parent = model.pick(b)
            body = {"title": "g"} | ({"parentGoalId": parent} if parent else {})
            resp = await post(client, actor, f"/{pid}/goals", body)
            if parent is not None and model.depth(parent) + 1 > MAX_DEPTH:
                event("create refused: too deep")
                assert resp.status_code == 422, resp.text
            else:
                assert resp.status_code == 201, resp.text
                model.parent[resp.json()["id"]] = parent
        elif kind == "move" and model.parent:
            goal, target = model.pick(a), model.pick(b)
            assert goal is not None
            resp = await patch(client, actor, f"/{pid}/goals/{goal}", {"parentGoalId": target})
            cycle = target is not None and target in model.subtree(goal)
            too_deep = target is not None and model.depth(target) + model.height(goal) > MAX_DEPTH
            if cycle or too_deep:
                event("move refused: " + ("cycle" if cycle else "too deep"))
                assert resp.status_code == 422, resp.text
            else:
                assert resp.status_code == 200, resp.text
                model.parent[goal] = target
        elif kind == "archive" and model.parent:
            goal = model.pick(a)
            assert goal is not None
            assert (await delete(client, actor, f"/{pid}/goals/{goal}")).status_code == 204
            for gone in model.subtree(goal):
                del model.parent[gone]
    plan = (await get(client, actor, f"/{pid}", include="goals")).json()
    tree: dict[str, str | None] = {}
    _flatten(plan["goals"], None, tree)
    assert tree == model.parent
    assert all(model.depth(goal) <= MAX_DEPTH for goal in tree)
