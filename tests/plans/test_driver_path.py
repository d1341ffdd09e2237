"""The Core write path (updatePlanTask's checks and write in `kit.driver.transaction`, the unit
of work's `atomic()`): the transaction is SQLAlchemy's own, begun on the driver at once, so the
driver's statements and SQLAlchemy's run in the one transaction (no savepoint, nothing
committed on its own), and the `plan.updated` event's plan, rendered there, is getPlan's,
JSON columns included."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import bindparam, event, update

from salesplan.kit.driver import DriverStatement, transaction
from salesplan.kit.responses import json_bytes
from salesplan.models.plans import Plan
from salesplan.plans.events import PlanUpdated
from tests.plans.helpers import PLANS, new_plan

RENAME = DriverStatement(
    update(Plan.__table__)
    .where(Plan.__table__.c.id == bindparam("plan_id", type_=Plan.__table__.c.id.type))
    .values(name=bindparam("name"), updated_at=Plan.__table__.c.updated_at)
)


async def test_the_event_plan_is_rendered_in_the_driver_transaction(app, client, db, actor):
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
    savepoints: list[object] = []

    def savepoint(*args: object) -> None:
        savepoints.append(args)

    engine = app.state.engine.sync_engine
    async with app.state.engine.connect() as conn:
        event.listen(engine, "savepoint", savepoint)
        try:
            async with transaction(conn):
                assert conn.in_transaction()
                # A statement sent straight to the driver, then SQLAlchemy's reads: one
                # transaction sees the other's write.
                await RENAME.fetchval(conn, {"plan_id": pid, "name": "Renamed"})
                rendered = await PlanUpdated(actor.org.id, pid).resource(conn)
                assert conn.in_transaction()
            got = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
            assert got.status_code == 200, got.text
            assert json.loads(json_bytes(rendered)) == got.json()
            assert got.json()["name"] == "Renamed"
            # Rolled back as a whole: the driver's write goes with SQLAlchemy's transaction.
            try:
                async with transaction(conn):
                    await RENAME.fetchval(conn, {"plan_id": pid, "name": "Lost"})
                    raise RuntimeError("roll back")
            except RuntimeError:
                pass
        finally:
            event.remove(engine, "savepoint", savepoint)
        assert not conn.in_transaction()
    assert savepoints == []
    again = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
    assert again.json()["name"] == "Renamed"
