"""A client generated with openapi-python-client (a dev dependency) from the live document:
every operation and every schema is generated without a warning, and the client creates a plan
with milestones, goals and tasks (bodies holding free-form objects), pages plans by cursor
(sending the declared `page=1&pageSize=50` beside `limit` and `cursor`, contract §4) and by
page, and parses every answer into its models, against a live server (uvicorn on a free loopback
port). No network beyond loopback: the generator runs from its own venv (`.venv-codegen`, made
by `make venv`), without its post hooks; the generated client runs on the test's Python (httpx,
attrs, dateutil)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from salesplan.app import create_app

# Its own venv (`make venv` / `make test` create it): openapi-python-client 0.29 pins typer
# below the version our CLI needs. SALESPLAN_CODEGEN names another generator command.
ROOT = Path(__file__).resolve().parents[2]
GENERATOR = Path(
    os.environ.get("SALESPLAN_CODEGEN", ROOT / ".venv-codegen" / "bin" / "openapi-python-client")
)
GENERATOR_FOUND = GENERATOR.exists()

CALLS = """
import json, sys
from salesplan_client import AuthenticatedClient
from salesplan_client.api.accounts import bulk_create_accounts
from salesplan_client.api.plan_goals import create_plan_goal
from salesplan_client.api.plan_milestones import update_plan_milestone
from salesplan_client.api.plans import create_plan, get_plan, list_plans
from salesplan_client.models import (
    BulkAccountsIn, GoalCreate, MilestoneUpdate, Plan, PlanCreate, PlanListResponse,
)
from salesplan_client.types import UNSET

base_url, token, org, user_id = sys.argv[1:5]
out = {}
with AuthenticatedClient(base_url=base_url, token=token) as client:
    created = create_plan.sync_detailed(
        client=client,
        x_organization_id=org,
        body=PlanCreate.from_dict({
            "name": "Generated client plan",
            "entityType": "USER",
            "entityId": user_id,
            "milestones": [{
                "milestone": {"name": "Discovery", "stage": {"order": 1}},
                "objective": {"text": "Qualify"},
                "tasks": [{"title": "Call"}],
                "goals": [{"title": "Meetings", "goalType": "QUANTIFIABLE", "target": 3}],
            }],
            "goals": [{
                "title": "Close", "goalType": "QUANTIFIABLE", "target": 10,
                "allocations": {"q1": 4, "q2": [1, 2]},
            }],
            "tasks": [{"title": "Kick-off"}],
        }),
    )
    assert created.status_code == 201, created.content
    plan = created.parsed
    assert isinstance(plan, Plan), created.content
    out["milestones"] = [m.milestone.to_dict() for m in plan.milestones]
    out["tasks"] = sorted(t.title for t in plan.tasks)
    out["goals"] = sorted(g.title for g in plan.goals)
    out["allocations"] = [g.allocations.to_dict() for g in plan.goals if g.allocations]
    for name in ("Second", "Third"):
        more = create_plan.sync_detailed(
            client=client, x_organization_id=org,
            body=PlanCreate.from_dict({"name": name, "entityType": "USER", "entityId": user_id}),
        )
        assert more.status_code == 201, more.content

    # Cursor mode: the generated call sends page=1&pageSize=50 (the declared defaults) too.
    walked, cursor, pages = [], UNSET, 0
    while True:
        listed = list_plans.sync_detailed(
            client=client, x_organization_id=org, limit=1, cursor=cursor
        )
        assert listed.status_code == 200, listed.content
        assert isinstance(listed.parsed, PlanListResponse), listed.content
        pages += 1
        assert listed.parsed.pagination.total_count is UNSET, listed.content
        walked += [str(p.id) for p in listed.parsed.data]
        if not listed.parsed.pagination.has_next_page:
            break
        cursor = listed.parsed.pagination.next_cursor
    out["walked"], out["pages"] = walked, pages
    # Page mode: another page size (or no limit).
    paged = list_plans.sync_detailed(client=client, x_organization_id=org, page_size=2)
    assert paged.status_code == 200, paged.content
    out["totalCount"] = paged.parsed.pagination.total_count
    out["pageSize"] = paged.parsed.pagination.page_size

    milestone_id = plan.milestones[0].id
    patched = update_plan_milestone.sync_detailed(
        plan.id, milestone_id, client=client, x_organization_id=org,
        body=MilestoneUpdate.from_dict({"milestone": {"name": "Discovery 2"}}),
    )
    assert patched.status_code == 200, patched.content
    goal = create_plan_goal.sync_detailed(
        plan.id, client=client, x_organization_id=org,
        body=GoalCreate.from_dict(
            {"title": "Pipeline", "goalType": "QUANTIFIABLE", "allocations": {"a": {"b": 1}}}
        ),
    )
    assert goal.status_code == 201, goal.content
    bulk = bulk_create_accounts.sync_detailed(
        client=client, x_organization_id=org,
        body=BulkAccountsIn.from_dict({"accounts": [{"name": "Acme"}, {"name": ""}]}),
    )
    assert bulk.status_code == 207, bulk.content
    out["bulk"] = [bulk.parsed.created, bulk.parsed.failed]
    fetched = get_plan.sync_detailed(plan.id, client=client, x_organization_id=org)
    assert isinstance(fetched.parsed, Plan), fetched.content
    out["plan"] = str(plan.id)
    out["milestoneAfter"] = fetched.parsed.milestones[0].milestone.to_dict()
    out["goalCount"] = len(fetched.parsed.goals)
print(json.dumps(out))
"""


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (method, path): operation["operationId"]
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    }


def _generated_endpoints(package: Path) -> set[tuple[str, str]]:
    """(method, path) of every endpoint module the generator wrote (its `_get_kwargs`)."""
    found = set()
    for module in (package / "api").glob("*/*.py"):
        text = module.read_text()
        method = re.search(r'"method": "(\w+)"', text)
        url = re.search(r'"url": "([^"]+)"', text)
        if method and url:
            path = re.sub(r"\{(\w+)\}", "{}", url.group(1))
            found.add((method.group(1), path))
    return found


@contextlib.asynccontextmanager
async def serve(app) -> AsyncIterator[str]:
    """uvicorn on a free loopback port, in this event loop; yields its origin."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="on", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def _run(*args: str, cwd: Path) -> str:
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(cwd)},
    )
    out, _ = await process.communicate()
    text = out.decode()
    assert process.returncode == 0, text
    return text


async def test_a_generated_client_has_every_operation_and_runs_them(
    settings, app, client, actor, tmp_path
) -> None:
    assert GENERATOR_FOUND, f"{GENERATOR} is missing: run `make venv`"
    async with serve(create_app(settings)) as origin:
        async with httpx.AsyncClient() as http:
            document = (await http.get(f"{origin}/api/v1/openapi.json")).json()
        (tmp_path / "openapi.json").write_text(json.dumps(document))
        (tmp_path / "config.yaml").write_text(
            "post_hooks: []\nproject_name_override: salesplan-client\n"
            "package_name_override: salesplan_client\n"
        )
        generated = await _run(
            str(GENERATOR),
            "generate",
            "--path",
            "openapi.json",
            "--meta",
            "none",
            "--output-path",
            "salesplan_client",
            "--config",
            "config.yaml",
            cwd=tmp_path,
        )
        # Nothing skipped, no schema dropped, no warning of any kind.
        assert not re.search(r"warning|unable to|will not be generated", generated, re.I), generated
        operations = _operations(document)
        wanted = {(method, re.sub(r"\{\w+\}", "{}", path)) for method, path in operations}
        assert _generated_endpoints(tmp_path / "salesplan_client") == wanted
        assert len(wanted) == len(operations) >= 130
        (tmp_path / "calls.py").write_text(textwrap.dedent(CALLS))
        out = await _run(
            sys.executable,
            "calls.py",
            origin,
            actor.key,
            str(actor.org.id),
            str(actor.user.id),
            cwd=tmp_path,
        )
    result = json.loads(out.strip().splitlines()[-1])
    assert result["milestones"] == [{"name": "Discovery", "stage": {"order": 1}}]
    assert result["tasks"] == ["Call", "Kick-off"]
    assert result["goals"] == ["Close", "Meetings"]
    assert result["allocations"] == [{"q1": 4, "q2": [1, 2]}]
    # Every plan once, one per page: limit=1 and the cursor won over page=1&pageSize=50.
    assert result["pages"] == 3 and len(set(result["walked"])) == 3
    assert result["plan"] in result["walked"]
    assert result["totalCount"] == 3 and result["pageSize"] == 2
    assert result["milestoneAfter"] == {"name": "Discovery 2"}
    assert result["goalCount"] == 3
    assert result["bulk"] == [1, 1]
    shutil.rmtree(tmp_path / "salesplan_client")
