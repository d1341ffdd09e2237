"""Import order made visible (issue #39, point 5), read from the source with `ast`:

- an import inside a function hides an arrow (and the order modules load in): outside the CLI
  (where a command imports what it runs, for start-up time) at most `MAX_FUNCTION_IMPORTS`;
- the top-level packages and modules of `salesplan` import each other without a circle, so
  that every arrow runs down: a domain never imports what wires it (`app.py`, `routers.py`,
  `events.py`, `jobs/`: the composition root) and the wiring is the one place that knows
  every domain.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "salesplan"

# Left inside functions on purpose: Alembic is a third of a CLI command's start-up
# (`migrate.py`, 5), FastAPI internals that may be gone in a release and fall back
# (`kit/adapters.py`, 2), a POSIX-only module in the sandboxed renderer (`engage/sandbox.py`).
MAX_FUNCTION_IMPORTS = 10

COMPOSITION_ROOT = ("app.py", "routers.py", "events.py", "jobs/")


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if not rel.startswith("migrations/"):
            yield rel, ast.parse(path.read_text())


def _module_of(rel: str) -> list[str]:
    parts = ["salesplan", *rel[: -len(".py")].split("/")]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imports(rel: str, tree: ast.Module) -> Iterator[tuple[ast.stmt, list[str], bool]]:
    """Each import statement: the modules (and module.name) it names, and whether it sits
    inside a function."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.stmt, list[str], bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                yield child, [a.name for a in child.names], in_function
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    package = _module_of(rel)
                    if not rel.endswith("__init__.py"):
                        package = package[:-1]
                    base = package[: len(package) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                yield child, [module] + [f"{module}.{a.name}" for a in child.names], in_function
            else:
                inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                yield from walk(child, inner)

    yield from walk(tree, False)


def function_imports(sources: Iterator[tuple[str, ast.Module]]) -> list[str]:
    return [
        f"{rel}:{node.lineno}"
        for rel, tree in sources
        if not rel.startswith("cli/")
        for node, _, in_function in _imports(rel, tree)
        if in_function
    ]


def _room(module: str) -> str | None:
    """The top-level package (`plans/`) or module (`db.py`) of `salesplan` a module is in;
    None for anything else (another library, a name of `salesplan/__init__.py`)."""
    parts = module.split(".")
    if parts[0] != "salesplan" or len(parts) < 2:
        return None
    if (SRC / parts[1]).is_dir():
        return parts[1] + "/"
    return parts[1] + ".py" if (SRC / f"{parts[1]}.py").is_file() else None


def room_arrows(sources: Iterator[tuple[str, ast.Module]]) -> dict[str, dict[str, str]]:
    """room -> {room it imports: the first place that does}."""
    arrows: dict[str, dict[str, str]] = {}
    for rel, tree in sources:
        here = _room(".".join(_module_of(rel)))
        if here is None:  # salesplan/__init__.py: the version, no arrow
            continue
        for node, names, _ in _imports(rel, tree):
            # `from salesplan import accesslog` names its room by the imported name.
            there = next((room for room in map(_room, names) if room is not None), None)
            if there is not None and there != here:
                arrows.setdefault(here, {}).setdefault(there, f"{rel}:{node.lineno}")
    return arrows


def circles(arrows: dict[str, dict[str, str]]) -> list[list[str]]:
    """Every arrow that closes a circle, as the path it closes (first arrow's place named)."""
    found = []
    for start, targets in sorted(arrows.items()):
        for target, place in sorted(targets.items()):
            # Is there a way back from target to start?
            seen, stack, came = {target}, [target], {target: ""}
            while stack:
                room = stack.pop()
                for nxt in arrows.get(room, {}):
                    if nxt not in seen:
                        seen.add(nxt)
                        came[nxt] = room
                        stack.append(nxt)
            if start in seen:
                path, room = [start], start
                while room != target:
                    room = came[room]
                    path.append(room)
                found.append([f"{start} -> {target} ({place})", *reversed(path)])
    return found


def test_few_imports_inside_functions() -> None:
    found = function_imports(_sources())
    assert len(found) <= MAX_FUNCTION_IMPORTS, found


def test_no_circle_between_top_level_packages() -> None:
    assert circles(room_arrows(_sources())) == []


def test_nothing_below_imports_the_composition_root() -> None:
    above = ("cli/", "mcp/", *COMPOSITION_ROOT)  # mcp/ derives its tools from routers.py
    found = [
        f"{rel}:{node.lineno}"
        for rel, tree in _sources()
        if not rel.startswith(above)
        for node, names, _ in _imports(rel, tree)
        if any((_room(name) or "") in COMPOSITION_ROOT or name == "salesplan.app" for name in names)
    ]
    assert found == []


# -- the rules see what they look for -------------------------------------------------------


def test_the_count_sees_an_import_in_a_function_and_not_in_the_cli() -> None:
    source = "import os\ndef f():\n    import json\n    class C:\n        from x import y\n"
    tree = ast.parse(source)
    assert function_imports(iter([("plans/a.py", tree)])) == ["plans/a.py:3", "plans/a.py:5"]
    assert function_imports(iter([("cli/a.py", tree)])) == []


def test_the_circle_rule_sees_a_circle_through_a_function_import() -> None:
    worker = ast.parse("def kinds():\n    from salesplan.calendar.sync import run\n")
    calendar = ast.parse("from salesplan.worker.context import WorkerContext\n")
    arrows = room_arrows(iter([("worker/kinds.py", worker), ("calendar/sync.py", calendar)]))
    assert arrows == {
        "worker/": {"calendar/": "worker/kinds.py:2"},
        "calendar/": {"worker/": "calendar/sync.py:1"},
    }
    assert len(circles(arrows)) == 2
    assert circles({"a/": {"b/": "a/x.py:1"}, "b/": {"c.py": "b/y.py:1"}}) == []


def test_a_relative_import_is_read_whole() -> None:
    tree = ast.parse("from ..kit import uow\nfrom .views import x\n")
    names = [n for _, names, _ in _imports("plans/tasks.py", tree) for n in names[:1]]
    assert names == ["salesplan.kit", "salesplan.plans.views"]
