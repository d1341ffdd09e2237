"""A client generated with openapi-python-client (a dev dependency) from the live document
calls listPlans and getPlan against a live server (uvicorn on a free loopback port, the test
database seeded with a plan), and parses both answers into its models. No network beyond
loopback: the generator runs from its own venv (`.venv-codegen`, made by `make venv`), without
its post hooks; the generated client runs on the test's Python (httpx, attrs, dateutil)."""

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

# What openapi-python-client 0.29 cannot generate: operations whose body holds a free-form
# object, whose values are the recursive `JsonValue` (a JSON value without NUL, numbers within
# 64 bits: what `kit.schemas.check_json_value` enforces). The generator supports recursive
# models but not a recursive union, so it skips these; every other operation is generated.
NOT_GENERATED = {
    "POST /api/v1/accounts/bulk",
    "POST /api/v1/engage/campaigns/bulk",
    "POST /api/v1/plans/{planId}/goals",
    "PATCH /api/v1/plans/{planId}/goals/{goalId}",
    "POST /api/v1/plans/{planId}/milestones",
    "PATCH /api/v1/plans/{planId}/milestones/{milestoneId}",
}

CALLS = """
import json, sys
from salesplan_client import AuthenticatedClient
from salesplan_client.api.plans import get_plan, list_plans
from salesplan_client.models import Plan, PlanListResponse

base_url, token, org, plan_id = sys.argv[1:5]
with AuthenticatedClient(base_url=base_url, token=token) as client:
    listed = list_plans.sync_detailed(client=client, x_organization_id=org)
    assert listed.status_code == 200, listed.content
    assert isinstance(listed.parsed, PlanListResponse), listed.content
    plan = get_plan.sync_detailed(plan_id, client=client, x_organization_id=org)
    assert plan.status_code == 200, plan.content
    assert isinstance(plan.parsed, Plan), plan.content
    print(json.dumps({
        "listed": [str(p.id) for p in listed.parsed.data],
        "hasNextPage": listed.parsed.pagination.has_next_page,
        "totalCount": listed.parsed.pagination.total_count,
        "name": plan.parsed.name,
        "milestones": [m.milestone.to_dict() for m in plan.parsed.milestones],
        "tasks": [t.title for t in plan.parsed.tasks],
        "goals": [g.title for g in plan.parsed.goals],
    }))
"""


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


async def test_a_generated_client_lists_and_reads_plans(settings, app, client, actor, tmp_path):
    assert GENERATOR_FOUND, f"{GENERATOR} is missing: run `make venv`"
    created = await client.post(
        "/api/v1/plans",
        headers=actor.in_org(),
        json={
            "name": "Generated client plan",
            "entityType": "USER",
            "entityId": str(actor.user.id),
            "milestones": [{"milestone": {"name": "Discovery"}, "tasks": [{"title": "Call"}]}],
            "goals": [{"title": "Close", "goalType": "QUANTIFIABLE", "target": 10}],
        },
    )
    assert created.status_code == 201, created.text
    plan = created.json()

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
        skipped = set(re.findall(r"WARNING parsing (\w+ \S+) within", generated))
        assert skipped == NOT_GENERATED, generated
        (tmp_path / "calls.py").write_text(textwrap.dedent(CALLS))
        out = await _run(
            sys.executable,
            "calls.py",
            origin,
            actor.key,
            str(actor.org.id),
            plan["id"],
            cwd=tmp_path,
        )
    result = json.loads(out.strip().splitlines()[-1])
    assert result["listed"] == [plan["id"]]
    assert result["hasNextPage"] is False and result["totalCount"] == 1
    assert result["name"] == "Generated client plan"
    assert result["milestones"] == [{"name": "Discovery"}]
    assert result["tasks"] == ["Call"]
    assert result["goals"] == ["Close"]
    shutil.rmtree(tmp_path / "salesplan_client")
