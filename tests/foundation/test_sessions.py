"""One way to the database (issue #39): every request, job, MCP call, import and command works
through a `kit.uow.UnitOfWork`, which alone opens sessions and connections and ends their
transactions; idempotency wraps the request's unit of work and commits nothing itself.

Read from the source with `ast`: outside `kit/uow.py` and `db.py` (and the migrations, which
Alembic runs), nothing calls a session factory (`app.state.sessionmaker()`,
`create_sessionmaker(engine)()`, `session_factory(...)`), constructs a session
(`AsyncSession(...)`, `async_sessionmaker(...)`), opens an engine's connection
(`engine.connect()`, `engine.begin()`) or commits a session by hand (`kit.uow.commit`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import salesplan

SRC = Path(salesplan.__file__).parent
OWNERS = {"kit/uow.py", "db.py"}
FACTORIES = {"sessionmaker", "read_sessionmaker", "session_factory", "async_sessionmaker"}
SESSIONS = {"AsyncSession", "Session"}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def hand_opened(tree: ast.Module) -> list[int]:
    """Lines that open a session or an engine's connection, or commit a session, by hand."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "salesplan.kit.uow"
            and any(alias.name == "commit" for alias in node.names)
        ):
            found.append(node.lineno)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = _name(func)
        opened = (
            name in FACTORIES
            or name in SESSIONS
            # create_sessionmaker(engine)(): a factory made and called at once
            or (isinstance(func, ast.Call) and "sessionmaker" in _name(func.func))
            or (
                name in {"connect", "begin"}
                and isinstance(func, ast.Attribute)
                and "engine" in _name(func.value)
            )
        )
        if opened:
            found.append(node.lineno)
    return found


def test_no_session_or_connection_is_opened_by_hand() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in OWNERS or rel.startswith("migrations/"):
            continue
        if lines := hand_opened(ast.parse(path.read_text())):
            found[rel] = lines
    assert found == {}


def test_the_rule_sees_each_way_of_opening_one() -> None:
    for source in (
        "async with request.app.state.sessionmaker() as s: pass",
        "async with create_sessionmaker(engine)() as s: pass",
        "s = AsyncSession(engine)",
        "async with ctx.engine.begin() as conn: pass",
        "async with engine.connect() as conn: pass",
        "from salesplan.kit.uow import commit",
    ):
        tree = ast.parse(f"async def f():\n    {source}")
        assert hand_opened(tree), source
    for source in (
        "async with ctx.unit_of_work() as uow: pass",
        "async with conn.begin(): pass",
        "maker = create_sessionmaker(engine)",
    ):
        tree = ast.parse(f"async def f():\n    {source}")
        assert hand_opened(tree) == [], source


def test_idempotency_commits_nothing() -> None:
    """`idempotency/` wraps the request's unit of work: no `commit` call of any kind there
    (the unit of work's own block commits the operation with the key's record)."""
    commits = []
    for path in sorted((SRC / "idempotency").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _name(node.func) == "commit":
                commits.append(f"{path.name}:{node.lineno}")
    assert commits == []
