"""The `models/` package: a module per resource (the tag whose operations alone reach a
class), `common` for the classes several share; classes in the order their bases need."""

from __future__ import annotations

import re
from collections import defaultdict

from codegen.operations import Op, module_of
from codegen.schemas import PAGINATION, Schemas

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _named(annotation: str, schemas: Schemas) -> set[str]:
    return {n for n in _IDENT.findall(annotation) if n in schemas.models}


def model_modules(schemas: Schemas, ops: list[Op]) -> dict[str, str]:
    deps: dict[str, set[str]] = {}
    while len(deps) < len(schemas.models):  # `fields` may name new inline classes
        for name, model in list(schemas.models.items()):
            if name in deps:
                continue
            found = set()
            for _, annotation, _, _ in schemas.fields(model):
                found |= _named(annotation, schemas)
            if model.page_of is not None:
                found |= _named(schemas.ref_type(model.page_of), schemas)
            deps[name] = found - {name}
    reached: dict[str, set[str]] = defaultdict(set)
    for op in ops:
        module = module_of(op)
        texts = [op.returns] + [a.annotation for a in op.path_args + op.query_args + op.body_args]
        stack = [n for t in texts for n in _named(t, schemas)]
        while stack:
            name = stack.pop()
            if module in reached[name]:
                continue
            reached[name].add(module)
            stack.extend(deps.get(name, ()))
    # A class no operation reaches (a component only named by another document part) lives
    # in `common`, and so does everything it names.
    stack = [name for name in schemas.models if not reached[name]]
    while stack:
        name = stack.pop()
        if "common" in reached[name] and len(reached[name]) > 1:
            continue
        reached[name].add("common")
        stack.extend(deps.get(name, ()))
    home = {
        name: next(iter(reached[name])) if len(reached[name]) == 1 else "common"
        for name in schemas.models
    }
    files = {}
    modules = sorted(set(home.values()) | {"common"})
    for module in modules:
        names = [n for n in _ordered(schemas, deps) if home[n] == module]
        imported = sorted({d for n in names for d in deps[n] if home[d] != module})
        lines = [
            f'"""Models of {module.replace("_", " ")}."""',
            "",
            "from __future__ import annotations",
            "",
            "from collections.abc import Mapping, Sequence",
            "from datetime import date",
            "from decimal import Decimal",
            "from typing import Any, Literal",
            "",
            "from pydantic import AwareDatetime, Field",
            "",
            f"from salesplan_client._models import ApiObject, Page, {PAGINATION}",
        ]
        by_module = defaultdict(list)
        for name in imported:
            by_module[home[name]].append(name)
        for other, found in sorted(by_module.items()):
            lines.append(f"from salesplan_client.models.{other} import {', '.join(found)}")
        lines += ["", f"__all__ = {names!r}", ""]
        for name in names:
            lines += ["", schemas.class_source(schemas.models[name])]
        files[f"models/{module}.py"] = "\n".join(lines)
    exported = sorted(schemas.models)
    init = ['"""Every model of the API, as `salesplan_client.models.<Name>`."""', ""]
    init.append(f"from salesplan_client._models import Page, {PAGINATION}")
    for module in modules:
        names = sorted(n for n in schemas.models if home[n] == module)
        if names:
            init.append(f"from salesplan_client.models.{module} import {', '.join(names)}")
    init += ["", f"__all__ = {sorted([*exported, 'Page', PAGINATION])!r}", ""]
    files["models/__init__.py"] = "\n".join(init)
    return files


def _ordered(schemas: Schemas, deps: dict[str, set[str]]) -> list[str]:
    """Classes before those that name them (a base class must exist first)."""
    out: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if state.get(name):
            return
        state[name] = 1
        for dep in sorted(deps.get(name, ())):
            visit(dep)
        state[name] = 2
        out.append(name)

    for name in sorted(schemas.models):
        visit(name)
    return out
