"""The spec's object tables ("the seed", integration-api.md § Resources and their fields), parsed
from its markdown: for each object its fields with type, nullability and whether required.

The spec is read from the shared documents beside the checkout when they are there
(`SALESPLAN_SPEC`, `../shared/spec/`, `/work/shared/spec/`), else from `seed_objects.md`, the
section as vendored here (a test keeps the two equal where both exist)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "seed_objects.md"
SECTION_START = "## Resources and their fields"
SECTION_END = "## States and transitions"


def spec_path() -> Path | None:
    candidates = [os.environ.get("SALESPLAN_SPEC", "")]
    candidates += [
        str(HERE.parents[1] / ".." / "shared" / "spec" / "integration-api.md"),
        "/work/shared/spec/integration-api.md",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def section(text: str) -> str:
    """The spec's "Resources and their fields" section, up to the next one."""
    start = text.index(SECTION_START)
    end = text.index(SECTION_END, start)
    return text[start:end]


def seed_text() -> str:
    path = spec_path()
    if path is None:
        return VENDORED.read_text()
    return section(path.read_text())


@dataclass
class SeedType:
    """One field's type as the table says it."""

    type: str  # JSON type: string, integer, number, boolean, object, array
    format: str | None = None
    enum: list[str] | None = None
    minimum: int | None = None
    items: SeedType | str | None = None  # a primitive, or the name of a seed object
    free_form: bool = False
    nullable: bool = False
    ref: str | None = None  # the name of a seed object


@dataclass
class SeedField:
    name: str
    type: SeedType
    required: bool | None  # None: the table has no Required column


@dataclass
class SeedObject:
    name: str
    strict: bool
    fields: dict[str, SeedField] = field(default_factory=dict)


PRIMITIVES: dict[str, dict[str, Any]] = {
    "uuid": {"type": "string", "format": "uuid"},
    "string": {"type": "string"},
    "date-time": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "boolean": {"type": "boolean"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "object": {"type": "object"},
}


def parse_type(text: str, notes: str, enums: dict[str, list[str]], objects: set[str]) -> SeedType:
    text = text.strip()
    nullable = text.endswith(" or null")
    if nullable:
        text = text[: -len(" or null")].strip()
    minimum = None
    bound = re.fullmatch(r"(\w+) >= (\d+)", text)
    if bound:
        text, minimum = bound.group(1), int(bound.group(2))
    if text.startswith("array of "):
        inner = text[len("array of ") :].strip()
        items: SeedType | str
        if inner in objects:
            items = inner
        elif inner == "map contacts":
            items = "map contact"
        else:
            items = parse_type(inner, "", enums, objects)
        return SeedType("array", items=items, nullable=nullable)
    if text in objects:
        return SeedType("object", ref=text, nullable=nullable)
    if text.startswith("object"):
        return SeedType("object", free_form="free-form" in text, nullable=nullable)
    if text in PRIMITIVES:
        p = PRIMITIVES[text]
        return SeedType(p["type"], p.get("format"), minimum=minimum, nullable=nullable)
    # An enumeration type: its values in the row's notes, or in a "<Type> values:" line.
    values = re.findall(r"`([^`]+)`", notes) or enums.get(text)
    assert values, f"no values for the seed type {text}"
    return SeedType("string", enum=values, nullable=nullable)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_seed(text: str) -> dict[str, SeedObject]:
    """Every object table of the section: `### Name (strict)` (or `### Buyer map …`) followed
    by a `| Field | Type | Required | Notes |` (or `| Field | Type | Notes |`) table."""
    enums = {
        m.group(1): re.findall(r"`([^`]+)`", m.group(2))
        for m in re.finditer(r"^(\w+) values: ([^.]*)\.", text, re.M)
    }
    headings = re.findall(r"^### (\w+)", text, re.M)
    objects = set(headings)
    found: dict[str, SeedObject] = {}
    current: SeedObject | None = None
    columns: list[str] = []
    for line in text.splitlines():
        if line.startswith("### "):
            name = "BuyerMap" if line.startswith("### Buyer map") else line.split()[1]
            current = SeedObject(name, strict="(strict)" in line)
            found[name] = current
            columns = []
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells[0] == "Field":
            columns = [c.lower() for c in cells]
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        row = dict(zip(columns, cells, strict=True))
        notes = row.get("notes", "")
        for name in (n.strip() for n in row["field"].split(",")):
            required = None if "required" not in row else row["required"] == "yes"
            current.fields[name] = SeedField(
                name, parse_type(row["type"], notes, enums, objects), required
            )
    # The two objects the spec says in prose rather than in a table.
    prose = re.search(r"^### PlanListResponse \(strict\)\n\n(.*)$", text, re.M)
    if prose:
        lst = SeedObject("PlanListResponse", strict=True)
        for name, kind, _required in re.findall(
            r"`(\w+)`: ([\w ]+?) \((required)\)", prose.group(1)
        ):
            lst.fields[name] = SeedField(name, parse_type(kind, "", enums, objects), True)
        found["PlanListResponse"] = lst
    return {name: obj for name, obj in found.items() if obj.fields}
