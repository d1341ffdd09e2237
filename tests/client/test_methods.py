"""Contract §17: every operation of the document is a method of both clients (and of their
`with_raw_response` views), grouped by tag, named from its operationId; the models and the
method table are what the generator makes of the live document (a test fails on drift); the
package's version is the server's."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import salesplan_client
from salesplan_client import AsyncSalesplan, Salesplan
from salesplan_client.resources import LIST_ALL, METHODS

import salesplan

CLIENT_DIR = Path(__file__).resolve().parents[2] / "clients" / "python"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("client_generate", CLIENT_DIR / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
async def document(client) -> dict[str, Any]:
    response = await client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return dict(response.json())


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        op["operationId"]: (method, path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op
    }


def _resolve(root: Any, dotted: str) -> Any:
    target = root
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


async def test_every_operation_has_a_method_on_both_clients(document) -> None:
    operations = _operations(document)
    assert set(METHODS) == set(operations), "regenerate: make client"
    sync, asynchronous = Salesplan("http://x"), AsyncSalesplan("http://x")
    for operation_id, dotted in METHODS.items():
        _, _, op = operations[operation_id]
        for client in (sync, asynchronous, sync.with_raw_response, asynchronous.with_raw_response):
            found = _resolve(client, dotted)
            assert callable(found), (operation_id, dotted)
        signature = inspect.signature(_resolve(sync, dotted))
        positional = [
            p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        path_params = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
        assert len(positional) == len(path_params), (operation_id, positional, path_params)
        assert inspect.iscoroutinefunction(_resolve(asynchronous, dotted)), operation_id
        assert _resolve(sync, dotted).__doc__.rstrip().endswith(f"({operation_id}).")
    await asynchronous.close()
    sync.close()


async def test_cursor_lists_have_list_all(document) -> None:
    operations = _operations(document)
    cursor_lists = {
        operation_id
        for operation_id, (_, _, op) in operations.items()
        if any(p["name"] == "cursor" for p in op.get("parameters", []))
    }
    assert set(LIST_ALL) == cursor_lists and len(cursor_lists) >= 30
    client = Salesplan("http://x")
    for dotted in LIST_ALL.values():
        assert callable(_resolve(client, dotted))
    client.close()


def test_the_contracts_examples_are_where_it_says() -> None:
    """Contract §17's names: `client.accounts.list`, `client.plans.get(plan_id, include=…)`,
    `client.plan_tasks.update(plan_id, task_id, …)`, `client.engage.messages.send`,
    `client.webhooks.endpoints.create`."""
    assert METHODS["listAccounts"] == "accounts.list"
    assert METHODS["getPlan"] == "plans.get"
    assert METHODS["updatePlanTask"] == "plan_tasks.update"
    assert METHODS["sendEngageMessage"] == "engage.messages.send"
    assert METHODS["createWebhookEndpoint"] == "webhooks.endpoints.create"
    assert LIST_ALL["listAccounts"] == "accounts.list_all"
    get = inspect.signature(Salesplan.__dict__["with_raw_response"].func)
    assert get.return_annotation
    update = inspect.signature(Salesplan("http://x").plan_tasks.update)
    assert list(update.parameters)[:2] == ["plan_id", "task_id"]
    assert "include" in inspect.signature(Salesplan("http://x").plans.get).parameters


async def test_the_checked_in_client_is_what_the_document_generates(document) -> None:
    """`make client` regenerates the models and the method table; this fails until it was run
    after a change of the document (a new operation, field or enum value)."""
    generator = _generator()
    diff = generator.drift(generator.generate(document))
    assert diff == [], "run `make client`:\n" + "".join(diff[:80])


def test_the_client_version_is_the_servers() -> None:
    assert salesplan_client.__version__ == salesplan.__version__
    pyproject = (CLIENT_DIR / "pyproject.toml").read_text()
    assert 'version = { attr = "salesplan_client._version.__version__" }' in pyproject


def test_runtime_dependencies_are_httpx_and_pydantic_only() -> None:
    import tomllib

    project = tomllib.loads((CLIENT_DIR / "pyproject.toml").read_text())["project"]
    assert project["name"] == "salesplan-client"
    names = {d.split(">")[0].split("<")[0].split("=")[0].strip() for d in project["dependencies"]}
    assert names == {"httpx", "pydantic"}
