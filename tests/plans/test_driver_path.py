"""The Core write path (updatePlanTask's checks and write in `kit.driver.transaction`): the
`plan.updated` event's plan is read with the driver's statements only, so the driver's
transaction stays the one owner (SQLAlchemy begins no transaction, no savepoint, of its own)
and the plan it renders is getPlan's, JSON columns included."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import event

from salesplan.kit.driver import transaction
from salesplan.kit.responses import json_bytes
from salesplan.kit.scoping import OrgScope
from salesplan.plans.views import plan_updated
from tests.plans.helpers import PLANS, new_plan


async def test_the_event_plan_is_read_on_the_driver_alone(app, client, db, actor, is_postgres):
    plan = await new_plan(
        client,
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "m"},
                "objective": {"text": "close", "n": 2},
                "prospectOwnerIds": [],
                "goals": [{"title": "linked", "goalType": "MILESTONE_BASED"}],
                "tasks": [{"title": "t1", "completed": True}, {"title": "t2"}],
            }
        ],
        goals=[{"title": "root", "allocations": {"q1": 1}, "childGoals": [{"title": "c"}]}],
        tasks=[{"title": "loose"}],
    )
    pid = uuid.UUID(plan["id"])
    begun: list[object] = []

    def began(connection: object) -> None:
        begun.append(connection)

    async with app.state.engine.connect() as conn:
        async with transaction(conn):
            event.listen(app.state.engine.sync_engine, "begin", began)
            try:
                _, type_, data = plan_updated(conn, OrgScope(actor.org.id), pid)  # type: ignore[arg-type]
                rendered = await data()
            finally:
                event.remove(app.state.engine.sync_engine, "begin", began)
            assert begun == []  # no transaction (no savepoint) begun by SQLAlchemy
            if is_postgres:  # asyncpg's own transaction; SQLAlchemy's is SQLite's there
                assert not conn.in_transaction()
        assert not conn.in_transaction()
    assert type_ == "plan.updated"
    got = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
    assert got.status_code == 200, got.text
    assert json.loads(json_bytes(rendered)) == got.json()
