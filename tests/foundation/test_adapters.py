"""kit.adapters: the private names of FastAPI, Starlette, the MCP SDK and SQLAlchemy are used in
that one module, and each of its hooks, when a release moved the internal it needs, logs a
warning naming it and runs the framework's plain path: the app still starts and answers a REST
call, an MCP tools/call and a database read as before (issue 30, item 4)."""

from __future__ import annotations

import ast
import logging
import sys
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

import salesplan
from salesplan.app import create_app
from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.config import Settings
from salesplan.kit import adapters
from salesplan.kit.driver import DriverStatement
from salesplan.kit.uow import commit
from salesplan.mcp.registry import TOOLS
from salesplan.models.crm import Account
from salesplan.models.plans import Plan
from salesplan.plans import repository as repo
from salesplan.plans import write_repository as writes
from tests.fixtures.crm import make_account
from tests.fixtures.factories import make_actor, make_key
from tests.mcp.conftest import body, connect, error, rest, serve

SRC = Path(salesplan.__file__).parent
ADAPTER = SRC / "kit" / "adapters.py"

# Underscored names that are public API: SQLAlchemy's Row (`_mapping`, `_fields`, `_asdict`,
# `_t`, `_tuple`) and namedtuple's.
PUBLIC_UNDERSCORED = {"_mapping", "_fields", "_asdict", "_replace", "_make", "_t", "_tuple"}
# Framework internals without an underscore.
INTERNAL_NAMES = {
    "middleware_stack",
    "fastapi_middleware_astack",
    "fastapi_inner_astack",
    "fastapi_function_astack",
}
INTERNAL_MODULES = ("fastapi.dependencies", "fastapi.middleware.asyncexitstack")
# Private names of other packages still used outside the adapter, in folders another branch is
# rewriting (issue 30): jinja2's Undefined name. To move into kit/adapters.py at merge.
ELSEWHERE = {"engage/sandbox.py": ["_undefined_name"]}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _our_private_names() -> set[str]:
    """Underscored names salesplan defines itself (attributes set on `self`, methods, class
    attributes): using those on another object of our own class is not a framework's."""
    names: set[str] = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(item.name)
                    elif isinstance(item, ast.AnnAssign | ast.Assign):
                        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {name for name in names if _private(name)}


def private_uses(source: str, ours: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Every use of a framework's private name in `source`: an underscored attribute of an
    object other than `self`/`cls` (not one of `ours`), an underscored name or module
    imported from another package, a framework's internal module, name or scope key."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = node.module
            if module.startswith("salesplan") or module == "__future__":
                continue
            if module.startswith(INTERNAL_MODULES) or any(map(_private, module.split("."))):
                found.append(f"{where}: from {module} import")
            found += [f"{where}: import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(INTERNAL_MODULES) or any(
                    map(_private, alias.name.split("."))
                ):
                    found.append(f"{where}: import {alias.name}")
        elif isinstance(node, ast.Attribute):
            base = node.value
            own = isinstance(base, ast.Name) and base.id in ("self", "cls")
            if node.attr in INTERNAL_NAMES or (
                _private(node.attr)
                and not own
                and node.attr not in PUBLIC_UNDERSCORED
                and node.attr not in ours
            ):
                found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in INTERNAL_NAMES:
                found.append(f"{where}: {node.value!r}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and node.args[1].value not in ours
        ):
            found.append(f"{where}: {node.func.id}(…, {node.args[1].value!r})")
    return found


def test_framework_private_names_are_used_only_in_the_adapter() -> None:
    ours = _our_private_names()
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if path == ADAPTER or "migrations" in path.relative_to(SRC).parts:
            continue
        name = str(path.relative_to(SRC))
        uses = private_uses(path.read_text(), ours | set(ELSEWHERE.get(name, ())))
        if uses:
            found[name] = uses
    assert found == {}, "move these into salesplan/kit/adapters.py"


def test_the_scan_finds_each_kind_of_private_use() -> None:
    sample = """
from fastapi.dependencies.utils import _get_param_model
from fastapi.middleware.asyncexitstack import AsyncExitStackMiddleware
import typer._click
lowlevel = server._lowlevel_server
router.middleware_stack = stack
scope["fastapi_middleware_astack"] = stack
keys = getattr(statement, "_values", None)
row._mapping
self._own
"""
    lines = {int(use.split(":")[0].removeprefix("line ")) for use in private_uses(sample)}
    assert lines == {2, 3, 4, 5, 6, 7, 8}  # not Row's public `_mapping`, not our own `self._own`
    assert private_uses(ADAPTER.read_text())  # the adapter holds them


# --- each hook's fallback ----------------------------------------------------------------------


def _rename(name: str) -> Callable[[pytest.MonkeyPatch], None]:
    """A release that renamed the internal `adapters.<name>` names."""

    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(adapters, name, f"{getattr(adapters, name)}_renamed")

    return apply


def _rename_parameter_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        adapters, "PARAMETER_HELPERS", tuple(f"{n}_renamed" for n in adapters.PARAMETER_HELPERS)
    )


def _drop_exit_stack_middleware(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastapi.middleware.asyncexitstack", None)


KNOCKOUTS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], str]] = {
    "parameter helpers": (_rename_parameter_helpers, "_get_param_model_renamed"),
    "router dispatch": (_rename("MIDDLEWARE_STACK"), "middleware_stack_renamed"),
    "route runner": (_drop_exit_stack_middleware, "AsyncExitStackMiddleware"),
    "low-level server": (_rename("LOWLEVEL_SERVER"), "_lowlevel_server_renamed"),
    "request handlers": (_rename("REQUEST_HANDLERS"), "_request_handlers_renamed"),
    "bind processors": (_rename("BIND_PROCESSORS"), "_bind_processors_renamed"),
    "result processor": (_rename("RESULT_PROCESSOR"), "_cached_result_processor_renamed"),
}


@pytest.mark.parametrize("knockout", sorted(KNOCKOUTS))
async def test_a_moved_internal_is_logged_and_the_app_answers_unpatched(
    knockout: str,
    settings: Settings,
    db: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    is_postgres: bool,
) -> None:
    apply, internal = KNOCKOUTS[knockout]
    monkeypatch.setattr(adapters, "_warned", set())
    apply(monkeypatch)
    caplog.set_level(logging.WARNING, logger="salesplan.adapters")
    actor = await make_actor(db, scopes=["accounts:read", "accounts:write"])
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.com")
    app = create_app(settings)
    async with serve(app) as server:
        # REST: a read, a 405 with the path's full Allow, a write with a query parameter.
        got = await rest(server, actor.key, "GET", f"/accounts/{account.id}")
        assert got.status_code == 200, got.text
        assert got.json()["name"] == "Acme"
        wrong = await rest(server, actor.key, "PUT", "/accounts/bulk", json={})
        assert wrong.status_code == 405, wrong.text
        assert set(wrong.headers["allow"].split(", ")) == {"POST", "OPTIONS"}
        # MCP: the listing cut to what the token may call, a call, a validation error.
        async with connect(server.url, actor.key) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            called = body(await client.call_tool("getAccount", {"accountId": str(account.id)}))
            invalid = error(await client.call_tool("getAccount", {"accountId": "nope"}))
            capabilities = client.server_capabilities
        assert names == sorted(names) and "getAccount" in names and "createAccount" in names
        assert "listPlans" not in names
        assert called == got.json()
        assert invalid["code"] == "validation_error"
        assert [e["location"] for e in invalid["details"]["errors"]] == [["arguments", "accountId"]]
        assert capabilities is None or capabilities.tools is not None
        # A database read on the driver (compiled anew, so that its processors are looked up).
        statement = DriverStatement(
            select(Account.id, Account.created_at).where(Account.id == account.id)
        )
        async with app.state.engine.connect() as conn:
            row = await statement.fetchrow(conn, {})
        # SQLAlchemy's types on both engines: the id bound and read back as a UUID, the
        # timestamp read as a datetime (SQLite stores text).
        assert row[0] == account.id and isinstance(row[1], datetime)
        # A plan write through the session: its version goes up by one per statement.
        owner = await make_key(db, actor.user, scopes=list(APPROVED_SCOPES))
        plan = await rest(
            server,
            owner,
            "POST",
            "/plans",
            json={"entityType": "ACCOUNT", "entityId": str(account.id), "name": "Mutual plan"},
        )
        assert plan.status_code == 201, plan.text
        plan_id = uuid.UUID(plan.json()["id"])
        version = select(Plan.version).where(Plan.id == plan_id)
        before = (await db.execute(version)).scalar_one()
        # Announced by the repository's write (`PlanChanged`), bumped once by the commit's
        # handler; a bump by hand adds its own.
        await writes.update_plans(db, [Plan.id == plan_id], {"name": "Renamed"})
        await db.execute(repo.bump([plan_id]))
        await commit(db)
        assert (await db.execute(version)).scalar_one() == before + 2
    for name in names:
        assert permitted_spec(name)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    if knockout == "result processor" and is_postgres:
        return  # asyncpg's rows need no result processing: the internal is not used there
    assert any(internal in message for message in warnings), warnings


def permitted_spec(name: str) -> bool:
    spec = TOOLS[name]
    return spec.scope in (None, "accounts:read", "accounts:write")
