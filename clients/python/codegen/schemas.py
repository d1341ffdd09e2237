"""JSON Schema → Python: the annotation of a value (as answered, or as a method argument) and
the pydantic class of an object."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from codegen.naming import camel_class, snake

# Answered by `_models.py` (hand-written), or not a class.
PAGINATION = "PaginationMeta"
JSON_OBJECT = "JsonObject"
RESERVED_FIELDS = frozenset(dir(BaseModel)) | {"to_dict"}
# `include=milestones,goals` style query parameters: a list is joined with commas.
_COMMA_LIST = re.compile(r"^\^\(([\w|]+)\)\(,\(\1\)\)\*\$$")


@dataclass
class Model:
    name: str
    schema: dict[str, Any]
    page_of: str | None = None  # a list page: `Page[item]`


class Schemas:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.components: dict[str, Any] = document.get("components", {}).get("schemas", {})
        self.models: dict[str, Model] = {}  # python class name → model
        self.class_of: dict[str, str] = {}  # component → python class name
        self.alias: dict[str, str] = {}  # component → an annotation that is no class of ours
        self.page_alias: dict[str, str] = {}  # `ListResponse_X_` → X: `Page[X]`
        self._name_components()

    # --- names ---------------------------------------------------------------------------

    def _name_components(self) -> None:
        taken = set(self.components)
        for component, schema in self.components.items():
            if component == JSON_OBJECT:
                self.alias[component] = "dict[str, Any]"
                continue
            if component == PAGINATION:
                self.class_of[component] = PAGINATION
                continue
            item = self._page_item(schema)
            name = self._python_name(component, taken)
            if item is not None and component.startswith("ListResponse_"):
                self.page_alias[component] = item
                continue
            self.class_of[component] = name
            self.models[name] = Model(name, schema, page_of=item)

    @staticmethod
    def _python_name(component: str, taken: set[str]) -> str:
        """`AccountOut` → `Account` (unless a component is named so), else as published."""
        name = re.sub(r"[^0-9A-Za-z]", "", component)
        if name.endswith("Out") and name[:-3] and name[:-3] not in taken:
            return name[:-3]
        return name

    def _page_item(self, schema: dict[str, Any]) -> str | None:
        """The item component of a list page (`{data: [X], pagination}`), or None."""
        props = schema.get("properties", {})
        if set(props) != {"data", "pagination"}:
            return None
        items = props["data"].get("items", {})
        if props["pagination"].get("$ref", "").endswith(f"/{PAGINATION}") and "$ref" in items:
            return str(items["$ref"]).rsplit("/", 1)[1]
        return None

    def page_item(self, schema: dict[str, Any], *, prefix: str = "") -> str | None:
        """The item class of a list page answer (`Page[X]`, or a class deriving it)."""
        component = str(schema.get("$ref", "")).rsplit("/", 1)[-1]
        item = self.page_alias.get(component)
        if item is None and component in self.class_of:
            item = (
                self.models[self.class_of[component]].page_of if component != PAGINATION else None
            )
        return None if item is None else self.ref_type(item, prefix=prefix)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            node: Any = self.document
            for part in schema["$ref"].removeprefix("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def ref_type(self, component: str, *, prefix: str = "") -> str:
        if component in self.alias:
            return self.alias[component]
        if component in self.page_alias:
            return f"Page[{self.ref_type(self.page_alias[component], prefix=prefix)}]"
        return prefix + self.class_of[component]

    # --- annotations ---------------------------------------------------------------------

    def annotation(
        self, schema: dict[str, Any] | bool, hint: str, *, prefix: str = "", argument: bool = False
    ) -> str:
        """The Python annotation of a value of `schema`: as answered (pydantic types), or, with
        `argument`, as a method accepts it (a model or a mapping, any sequence, …). Inline
        objects with properties become classes named after `hint`."""
        if schema is True or schema == {}:
            return "Any"
        assert isinstance(schema, dict)
        if "$ref" in schema:
            component = schema["$ref"].rsplit("/", 1)[1]
            if not schema["$ref"].startswith("#/components/schemas/") or (
                component not in self.components
            ):
                return "Any"
            if argument:
                if component == JSON_OBJECT:
                    return "Mapping[str, Any]"
                if component in self.alias or component in self.page_alias:
                    return "Mapping[str, Any]"
                return f"{prefix}{self.class_of[component]} | Mapping[str, Any]"
            return self.ref_type(component, prefix=prefix)
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            literal = f"Literal[{', '.join(repr(v) for v in values)}]"
            return literal + (" | None" if None in schema["enum"] else "")
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [
                    self.annotation(o, hint, prefix=prefix, argument=argument) for o in schema[key]
                ]
                return _union(options)
        if "allOf" in schema and len(schema["allOf"]) == 1:
            return self.annotation(schema["allOf"][0], hint, prefix=prefix, argument=argument)
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union(
                [
                    self.annotation({**schema, "type": k}, hint, prefix=prefix, argument=argument)
                    for k in kind
                ]
            )
        fmt = schema.get("format")
        if kind == "string":
            if fmt == "date-time":
                return "datetime" if argument else "AwareDatetime"
            if fmt == "date":
                return "date"
            if fmt == "decimal":
                return "Decimal | float | str" if argument else "Decimal"
            if fmt == "uuid":
                return "str | UUID" if argument else "str"
            return "str"
        if kind == "number":
            return ("Decimal | float" if argument else "Decimal") if fmt == "decimal" else "float"
        if kind == "integer":
            return "int"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            inner = self.annotation(
                schema.get("items", {}), hint + "Item", prefix=prefix, argument=argument
            )
            return f"Sequence[{inner}]" if argument else f"list[{inner}]"
        if kind == "object" or "properties" in schema:
            if schema.get("properties"):
                if argument:
                    return "Mapping[str, Any]"
                name = self._inline(hint, schema)
                return prefix + name
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                value = self.annotation(extra, hint + "Value", prefix=prefix, argument=argument)
                return f"Mapping[str, {value}]" if argument else f"dict[str, {value}]"
            return "Mapping[str, Any]" if argument else "dict[str, Any]"
        return "Any"

    def query_annotation(self, schema: dict[str, Any], hint: str) -> str:
        """A query parameter: as an argument, and a comma-separated list also as a sequence."""
        plain = self.annotation(schema, hint, prefix="models.", argument=True)
        for option in [schema, *schema.get("anyOf", [])]:
            match = (
                _COMMA_LIST.match(option.get("pattern", "")) if isinstance(option, dict) else None
            )
            if match:
                words = ", ".join(repr(w) for w in match.group(1).split("|"))
                return _union([f"Sequence[Literal[{words}]]", plain])
        return plain

    def _inline(self, hint: str, schema: dict[str, Any]) -> str:
        name = hint
        n = 2
        while name in self.models and self.models[name].schema is not schema:
            name, n = f"{hint}{n}", n + 1
        self.models.setdefault(name, Model(name, schema))
        return name

    # --- classes -------------------------------------------------------------------------

    def fields(self, model: Model) -> list[tuple[str, str, str, bool]]:
        """(python name, annotation, wire name, required) of a model's properties."""
        schema = model.schema
        required = set(schema.get("required", []))
        out = []
        for wire, prop in schema.get("properties", {}).items():
            python = snake(wire)
            if python in RESERVED_FIELDS:
                python += "_"
            hint = model.name + camel_class([python])
            annotation = self.annotation(prop, hint)
            out.append((python, annotation, wire, wire in required))
        return out

    def class_source(self, model: Model) -> str:
        doc = _docstring(model.schema.get("description") or model.schema.get("title") or "")
        if model.page_of is not None:
            item = self.ref_type(model.page_of)
            return f"class {model.name}(Page[{item}]):\n{doc or '    pass'}\n"
        lines = [f"class {model.name}(ApiObject):"]
        if doc:
            lines.append(doc)
        for python, annotation, wire, required in self.fields(model):
            options = [] if required else ["default=None"]
            if python != wire:
                options.append(f"alias={wire!r}")
            if not required:
                annotation = optional(annotation)
            value = f" = Field({', '.join(options)})" if options else ""
            if options == ["default=None"]:
                value = " = None"
            lines.append(f"    {python}: {annotation}{value}")
        if len(lines) == 1 or (len(lines) == 2 and doc):
            lines.append("    pass")
        return "\n".join(lines) + "\n"


def optional(annotation: str) -> str:
    """`annotation | None`, unless it admits None already."""
    return _union([annotation, "None"])


def _union(options: list[str]) -> str:
    seen: list[str] = []
    for option in options:
        for part in _split_union(option):
            if part not in seen:
                seen.append(part)
    if "Any" in seen:
        return "Any"
    if "None" in seen:
        seen = [p for p in seen if p != "None"] + ["None"]
    return " | ".join(seen)


def _split_union(annotation: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in annotation:
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return parts


def _docstring(text: str, indent: str = "    ") -> str:
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return ""
    lines = text.splitlines()
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    body = "\n".join(f"{indent}{line}" if line.strip() else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{body}\n{indent}"""'
