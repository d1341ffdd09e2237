"""The shape of the tree (issue #30's bars), read from the source with `ast`:

- no ORM event hook on the global `Session` (cross-domain writes are domain events, said by
  the code that writes: `kit.events`);
- SQL statements are built only in repositories, `kit/`, `models/`, `db.py` and the worker's
  claim helper (`worker/`), with the few named exceptions below;
- a session is committed in one place, the unit of work (`kit/uow.py`);
- tables import no domain;
- no file over 500 lines.

The other bars have tests of their own: framework private names (test_adapters.py), hand-written
organization filters (test_tenancy_filters.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "salesplan"

# What builds SQL: SQLAlchemy's statement and expression constructors.
SQL_BUILDERS = {
    "select", "insert", "update", "delete", "text", "func", "and_", "or_", "not_", "exists",
    "literal", "literal_column", "case", "cast", "union", "union_all", "tuple_", "bindparam",
    "column", "table", "values", "null", "true", "false", "over", "lateral", "any_", "desc",
    "asc", "nulls_last", "distinct",
}  # fmt: skip

# Modules outside the repositories that still build SQL, each with why. At most three.
SQL_ELSEWHERE: dict[str, str] = {}


def _modules() -> list[tuple[str, ast.Module, int]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("migrations/"):
            continue
        source = path.read_text()
        out.append((rel, ast.parse(source), source.count("\n")))
    return out


MODULES = _modules()


def _sql_allowed(rel: str) -> bool:
    return (
        rel.startswith(("kit/", "models/", "worker/"))
        or rel == "db.py"
        or rel.endswith("repository.py")
        or "/repositories/" in rel
        or rel.split("/")[-1].startswith("repository_")
    )


def _sql_imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("sqlalchemy")
        ):
            for alias in node.names:
                if alias.name in SQL_BUILDERS or node.module.startswith("sqlalchemy.dialects"):
                    names.add(alias.name)
    return names


def test_sql_only_in_repositories() -> None:
    found = {
        rel: sorted(names)
        for rel, tree, _ in MODULES
        if not _sql_allowed(rel) and (names := _sql_imports(tree))
    }
    assert len(SQL_ELSEWHERE) <= 3
    assert {rel: names for rel, names in found.items() if rel not in SQL_ELSEWHERE} == {}


def _is_global_session(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return name in {"Session", "AsyncSession", "sessionmaker", "async_sessionmaker"}


def test_no_global_session_hooks() -> None:
    hooks = []
    for rel, tree, _ in MODULES:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in {"listen", "listens_for"} and node.args and _is_global_session(node.args[0]):
                hooks.append(f"{rel}:{node.lineno}")
    assert hooks == []


def _ends_a_session_transaction(func: ast.Attribute) -> bool:
    """`x.commit()` (but the unit of work's own `uow.commit()`), or `session.begin()`."""
    owner = func.value.id if isinstance(func.value, ast.Name) else ""
    if func.attr == "commit":
        return owner != "uow"
    return func.attr == "begin" and "session" in owner


def test_sessions_commit_only_in_the_unit_of_work() -> None:
    """`session.commit()` and `async with session.begin():` would skip the domain events'
    handlers; `kit.uow.commit(session)` (or a UnitOfWork) runs them."""
    commits = []
    for rel, tree, _ in MODULES:
        if rel in {"kit/uow.py", "kit/driver.py"}:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and not node.args
                and _ends_a_session_transaction(node.func)
            ):
                commits.append(f"{rel}:{node.lineno}")
    assert commits == []


def test_tables_import_no_domain() -> None:
    imports = []
    for rel, tree, _ in MODULES:
        if not rel.startswith("models/"):
            continue
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            for module in modules:
                if module.startswith("salesplan.") and not module.startswith(
                    ("salesplan.models", "salesplan.kit")
                ):
                    imports.append(f"{rel}: {module}")
    assert imports == []


def test_no_file_over_500_lines() -> None:
    assert {rel: lines for rel, _, lines in MODULES if lines > 500} == {}
