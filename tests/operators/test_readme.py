"""The README of a fresh clone: every file it points at is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_links_the_deployment_guide() -> None:
    assert "](docs/deployment.md)" in README
    assert (ROOT / "docs" / "deployment.md").is_file()


def test_readme_points_at_no_file_outside_the_repository() -> None:
    assert "../" not in README and "/work/" not in README
    for target in re.findall(r"\]\(([^)#]+)", README):
        if "://" in target:
            continue
        assert (ROOT / target).resolve().is_relative_to(ROOT), target
        assert (ROOT / target).exists(), target


def test_deployment_guide_says_how_to_create_the_database_and_run_the_worker() -> None:
    guide = (ROOT / "docs" / "deployment.md").read_text()
    assert "createdb" in guide and "salesplan worker" in guide


# ------------------------------------------------------------------ issue 29: the README's claims


def test_the_radicale_recipe_puts_an_event_into_a_real_radicale(tmp_path: Path) -> None:
    """The README's own commands, run by bash against a real Radicale (`curl -T -` sent a
    chunked body that Radicale read as empty: 400 "Item contains 0 components")."""
    import shutil
    import subprocess

    import httpx

    from tests.calendar.radicale_server import start_radicale
    from tests.conftest import need_service

    if shutil.which("curl") is None:
        need_service("curl", "the README's recipe runs curl")
    block = README.split("# A calendar collection, and one event in it:\n", 1)[1]
    recipe = block.split("\n\n", 1)[0]
    assert "MKCALENDAR" in recipe and "kickoff-1.ics" in recipe
    server = start_radicale(tmp_path / "radicale")
    try:
        script = recipe.replace("http://127.0.0.1:5232", server.base_url)
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert "Bad Request" not in ran.stdout, ran.stdout
        event = httpx.get(f"{server.base_url}/alice/sales/kickoff-1.ics", auth=server.auth())
        assert event.status_code == 200 and "SUMMARY:Kick-off" in event.text
    finally:
        server.process.terminate()
        server.process.wait(timeout=10)


def _table_tools() -> set[str]:
    section = README.split("## MCP (AI assistants)", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    names: set[str] = set()
    for row in rows[1:]:  # the header row is "| Tools | Scope |"
        names |= set(re.findall(r"\b([a-z][A-Za-z]+)\b", row.split("|")[1]))
    return names


async def test_the_mcp_tool_table_lists_every_tool(app: object) -> None:
    from salesplan.mcp.registry import TOOLS

    assert TOOLS, "the app registers its tools"
    # The server's own tools (test modules may register probes of their own).
    served = {
        name
        for name, spec in TOOLS.items()
        if spec.run is None or spec.run.__module__.startswith("salesplan.")
    }
    assert "createAccount" in served
    missing = served - _table_tools()
    assert not missing, f"tools missing from the README's MCP table: {sorted(missing)}"
    for feed_tool in ("getAccountInbox", "getCommunicationAnalytics", "listNeedsAttention"):
        assert feed_tool in _table_tools()


async def test_the_401_names_the_metadata_document_the_readme_names(client: object) -> None:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    challenge = (await client.post("/mcp", json={})).headers["www-authenticate"]
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource"' in challenge
    assert 'resource_metadata="{origin}/.well-known/oauth-protected-resource"' in README
    assert 'resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"' not in README
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        assert (await client.get(path)).status_code == 200


async def test_only_mcp_checks_the_host_header_as_the_readme_says(
    client: object, actor: object
) -> None:
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    evil = {"Host": "evil.example"} | actor.headers  # type: ignore[attr-defined]
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    mcp_headers = evil | {"Accept": "application/json, text/event-stream"}
    assert (await client.post("/mcp", json=initialize, headers=mcp_headers)).status_code == 421
    assert (await client.get("/api/v1/organizations", headers=evil)).status_code == 200
    assert "Only `/mcp` checks them" in README


# ------------------------------------------------------------------ issue 38: the README's examples


def test_the_readme_shows_an_artifacts_body_the_api_takes() -> None:
    import json

    from salesplan.calendar.schemas import ArtifactsIn

    found = re.search(r"-d '(\{\n  \"summary\".*?\})' \S*/artifacts", README, re.S)
    assert found, "no example body for PUT …/artifacts"
    body = ArtifactsIn.model_validate(json.loads(found.group(1)))
    assert body.summary and body.action_items and body.transcript
    assert body.action_items[0].assignee_email and body.transcript.segments


def test_the_migrate_example_counts_no_fixed_number_of_revisions() -> None:
    """The count grows with every release: the README shows its form, not a number."""
    assert not re.search(r"applied \d+\s+revisions", README)
    assert "`applied N\nrevisions`" in README or "`applied N revisions`" in README
    assert "database is up to date" in README
