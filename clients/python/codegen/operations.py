"""Each operation of the document as the client exposes it: its place, its arguments (path,
query, header, body) with their annotations, and what it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codegen.naming import Place, camel_class, namespaces, places, snake
from codegen.schemas import Schemas

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
HEADER_NAMES = {
    "X-Organization-Id": "organization_id",
    "Idempotency-Key": "idempotency_key",
    "If-None-Match": "if_none_match",
}
SKIPPED_QUERY = {"organizationId", "subscriberId"}  # the header's aliases: organization_id
OPTIONS = ("extra_headers", "timeout")


@dataclass
class Arg:
    python: str
    wire: str
    annotation: str
    required: bool


@dataclass
class Op:
    id: str
    method: str
    path: str
    tag: str
    summary: str
    place: Place
    home: tuple[str, ...]  # the tag's namespace: its module
    path_args: list[Arg] = field(default_factory=list)
    query_args: list[Arg] = field(default_factory=list)
    header_args: list[Arg] = field(default_factory=list)
    body_args: list[Arg] = field(default_factory=list)
    body: str | None = None  # "json" | "form"
    auto_key: bool = False
    returns: str = "None"
    cast: str = "None"
    conditional: bool = False  # If-None-Match: may answer NotModified
    lists: bool = False  # a cursor list: has list_all
    item: str | None = None  # what a list's page holds

    @property
    def const(self) -> str:
        return "_" + snake(self.id).upper()


# --- operations --------------------------------------------------------------------------


def operations(document: dict[str, Any], schemas: Schemas) -> list[Op]:
    found = []
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method in METHODS and isinstance(operation, dict) and "operationId" in operation:
                found.append((path, method, operation))
    tagged = [(o["operationId"], (o.get("tags") or ["default"])[0], p) for p, _, o in found]
    where = places(tagged)
    homes = namespaces({tag for _, tag, _ in tagged})
    return [
        _op(path, method, o, where[o["operationId"]], homes[tag], schemas)
        for (path, method, o), (_, tag, _) in zip(found, tagged, strict=True)
    ]


def _op(
    path: str,
    method: str,
    operation: dict[str, Any],
    place: Place,
    home: tuple[str, ...],
    schemas: Schemas,
) -> Op:
    op = Op(
        id=operation["operationId"],
        method=method.upper(),
        path=path,
        tag=(operation.get("tags") or ["default"])[0],
        summary=operation.get("summary") or operation["operationId"],
        place=place,
        home=home,
    )
    hint = camel_class([op.id])
    taken = {"self", *OPTIONS}
    for parameter in operation.get("parameters", []):
        parameter = schemas.resolve(parameter)
        name, where = parameter["name"], parameter["in"]
        schema = parameter.get("schema", {})
        if where == "query" and name in SKIPPED_QUERY:
            continue
        python = HEADER_NAMES.get(name) if where == "header" else None
        python = python or snake(name)
        required = bool(parameter.get("required")) or where == "path"
        if where == "query":
            annotation = schemas.query_annotation(schema, hint + camel_class([python]))
        else:
            annotation = schemas.annotation(schema, hint, prefix="models.", argument=True)
        if name == "Idempotency-Key":
            op.auto_key, required, annotation = True, False, "str"
        if name == "If-None-Match":
            op.conditional, annotation = True, "str"
        arg = Arg(python, name, annotation, required)
        {"path": op.path_args, "query": op.query_args, "header": op.header_args}[where].append(arg)
        taken.add(python)
    _body(op, operation, schemas, taken, hint)
    _returns(op, operation, schemas, hint)
    op.lists = op.item is not None and any(a.wire == "cursor" for a in op.query_args)
    return op


def _body(op: Op, operation: dict[str, Any], schemas: Schemas, taken: set[str], hint: str) -> None:
    content = operation.get("requestBody", {}).get("content", {})
    for media, kind in (
        ("application/json", "json"),
        ("application/x-www-form-urlencoded", "form"),
    ):
        if media not in content:
            continue
        op.body = kind
        schema = schemas.resolve(content[media].get("schema", {}))
        required = set(schema.get("required", []))
        for wire, prop in schema.get("properties", {}).items():
            python = snake(wire)
            if python in taken:
                python += "_body"
            annotation = schemas.annotation(
                prop, hint + camel_class([python]), prefix="models.", argument=True
            )
            op.body_args.append(Arg(python, wire, annotation, wire in required))
        return


def _returns(op: Op, operation: dict[str, Any], schemas: Schemas, hint: str) -> None:
    """The first success answer: a model (its class, or `Page[item]` for a list), something
    else JSON (`object`: parsed, not validated), a page or redirect (`httpx.Response`), or
    nothing (`None`)."""
    responses = operation.get("responses", {})
    for status in sorted(s for s in responses if s.startswith("2")):
        content = responses[status].get("content", {})
        if "application/json" in content:
            schema = content["application/json"].get("schema", {})
            op.returns = schemas.annotation(schema, hint + "Response", prefix="models.")
            one = "|" not in op.returns
            op.cast = (
                op.returns if one and op.returns.startswith(("models.", "Page[")) else "object"
            )
            op.item = schemas.page_item(schema, prefix="models.")
            return
        if content:
            op.returns = op.cast = "httpx.Response"
            return
    if any(s.startswith("3") and s != "304" for s in responses):
        op.returns = op.cast = "httpx.Response"


def module_of(op: Op) -> str:
    return "_".join(op.home)
