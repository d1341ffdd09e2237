"""The `resources/` package: for every namespace a sync class, an async class and their
`with_raw_response` views, one typed method per operation (and `list_all` for cursor lists);
`resources/__init__.py` holds the namespaces with no operation of their own, the client's
top-level attributes and `METHODS` (operationId → where its method is)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codegen.naming import camel_class
from codegen.operations import Op
from codegen.schemas import Schemas, _docstring, _union, optional

LIST_ONLY = {"cursor", "page", "pageSize", "limit"}
LIST_ALL_LIMIT = 200
# What a webhook event's `data` is, by resource, until the document has a `webhooks` section.
EVENT_RESOURCES = {
    "account": "AccountOut",
    "contact": "ContactOut",
    "opportunity": "OpportunityOut",
    "plan": "Plan",
    "plan_task": "PlanTask",
    "engage_message": "QueueItemOut",
    "engage_campaign": "CampaignOut",
    "calendar_event": "EventOut",
    "feed_message": "FeedMessageOut",
}
IMPORTS = """from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal, cast, overload
from uuid import UUID

import httpx

from salesplan_client import models
from salesplan_client._base import AsyncAPIClient, Operation, SyncAPIClient
from salesplan_client._models import NOT_GIVEN, NotGiven, NotModified, Page
from salesplan_client._resource import AsyncResource, SyncResource, to_raw, to_raw_async
"""


@dataclass
class Node:
    path: tuple[str, ...]
    ops: list[Op] = field(default_factory=list)
    children: dict[str, Node] = field(default_factory=dict)

    @property
    def cls(self) -> str:
        return camel_class(self.path)


def tree(ops: list[Op]) -> Node:
    root = Node(())
    for op in ops:
        node = root
        for part in op.place.namespace:
            node = node.children.setdefault(part, Node((*node.path, part)))
        node.ops.append(op)
    return root


def resource_modules(ops: list[Op]) -> dict[str, str]:
    """A module per tag for the sync classes, and one beside it (`<tag>_async`) for the async
    ones, so that each stays readable."""
    root = tree(ops)
    homes = {tuple(op.home) for op in ops}
    files = {}
    for home in sorted(homes):
        node = root
        for part in home:
            node = node.children[part]
        constants = "\n".join(sorted({_constant(op) for n in _walk(node) for op in n.ops}))
        module = "_".join(home)
        for is_async in (False, True):
            body = "\n\n".join(_classes(n, is_async) for n in _walk(node))
            kind = "async " if is_async else ""
            text = f'"""The {kind}{".".join(home)} operations."""\n\n{IMPORTS}\n'
            if is_async:
                text += f"from salesplan_client.resources.{module} import (\n"
                text += "".join(f"    {c.split(' ', 1)[0]},\n" for c in constants.splitlines())
                text += ")\n\n\n"
            else:
                text += constants + "\n\n\n"
            files[f"resources/{module}{'_async' if is_async else ''}.py"] = text + body
    files["resources/__init__.py"] = _init(root, homes, ops)
    return files


def _walk(node: Node) -> list[Node]:
    """A namespace and its sub-resources, children first (a class before its users)."""
    out = []
    for child in node.children.values():
        out += _walk(child)
    return [*out, node]


def _constant(op: Op) -> str:
    options = ""
    if op.body:
        options += f", body={op.body!r}"
    if op.auto_key:
        options += ", idempotency_key=True"
    return f"{op.const} = Operation({op.id!r}, {op.method!r}, {op.path!r}{options})"


def _classes(node: Node, is_async: bool) -> str:
    """The namespace's class (its methods, its sub-resources) and its raw view."""
    prefix = "Async" if is_async else ""
    base = "AsyncResource" if is_async else "SyncResource"
    client = "AsyncAPIClient" if is_async else "SyncAPIClient"
    lines = [f"class {prefix}{node.cls}({base}):"]
    if node.children:
        lines += [
            f"    def __init__(self, client: {client}) -> None:",
            "        super().__init__(client)",
        ]
        for name, child in node.children.items():
            lines.append(f"        self.{name} = {prefix}{child.cls}(client)")
        lines.append("")
    for op in node.ops:
        lines += _method(op, is_async)
        if op.lists:
            lines += _list_all(op, is_async)
    if len(lines) == 1:
        lines.append("    pass")
    raw = [
        f"class {prefix}{node.cls}WithRawResponse:",
        f"    def __init__(self, resource: {prefix}{node.cls}) -> None:",
    ]
    wrap = "to_raw_async" if is_async else "to_raw"
    for op in node.ops:
        raw.append(f"        self.{op.place.method} = {wrap}(resource.{op.place.method})")
    for name, child in node.children.items():
        raw.append(f"        self.{name} = {prefix}{child.cls}WithRawResponse(resource.{name})")
    if len(raw) == 2:
        raw.append("        pass")
    return "\n".join(lines) + "\n\n\n" + "\n".join(raw) + "\n"


def _signature(op: Op, *, listing: bool, conditional: str | None) -> list[str]:
    params = ["self"] + [f"{a.python}: {a.annotation}" for a in op.path_args]
    keywords = []
    required = [a for a in op.body_args + op.query_args if a.required]
    keywords += [f"{a.python}: {a.annotation}" for a in required]
    for arg in op.body_args:
        if not arg.required:
            keywords.append(f"{arg.python}: {_union([arg.annotation, 'NotGiven'])} = NOT_GIVEN")
    for arg in op.query_args:
        if arg.required or (listing and arg.wire in LIST_ONLY):
            continue
        keywords.append(f"{arg.python}: {optional(arg.annotation)} = None")
    if listing:
        keywords.append(f"limit: int = {LIST_ALL_LIMIT}")
    for arg in op.header_args:
        if arg.wire == "If-None-Match":
            if conditional == "absent":
                keywords.append("if_none_match: None = None")
            elif conditional == "given":
                keywords.append("if_none_match: str")
            else:
                keywords.append("if_none_match: str | None = None")
        elif arg.required:
            keywords.append(f"{arg.python}: {arg.annotation}")
        else:
            keywords.append(f"{arg.python}: {optional(arg.annotation)} = None")
    keywords += [
        "extra_headers: Mapping[str, str] | None = None",
        "timeout: float | httpx.Timeout | None = None",
    ]
    return [*params, "*", *keywords]


def _request_args(op: Op, *, listing: bool) -> list[str]:
    args = []
    if op.path_args:
        args.append("path={" + ", ".join(f"{a.wire!r}: {a.python}" for a in op.path_args) + "}")
    query = [a for a in op.query_args if not (listing and a.wire in LIST_ONLY)]
    if query:
        args.append("query={" + ", ".join(f"{a.wire!r}: {a.python}" for a in query) + "}")
    if op.header_args:
        args.append(
            "headers={" + ", ".join(f"{a.wire!r}: {a.python}" for a in op.header_args) + "}"
        )
    if op.body_args and not listing:
        args.append("body={" + ", ".join(f"{a.wire!r}: {a.python}" for a in op.body_args) + "}")
    elif op.body and not listing:
        args.append("body={}")
    if listing:
        args.append("limit=limit")
    args += ["extra_headers=extra_headers", "timeout=timeout"]
    return args


def _docs(op: Op, extra: str = "") -> str:
    text = f"{op.summary.rstrip('.')}.{extra}\n\n`{op.method} {op.path}` ({op.id})."
    return _docstring(text, "        ")


def _method(op: Op, is_async: bool) -> list[str]:
    define = "async def" if is_async else "def"
    wait = "await " if is_async else ""
    returns = op.returns
    lines = []
    if op.conditional:
        for variant, result in (("absent", returns), ("given", f"{returns} | NotModified")):
            params = ", ".join(_signature(op, listing=False, conditional=variant))
            lines += ["    @overload", f"    {define} {op.place.method}({params}) -> {result}: ..."]
        returns = f"{returns} | NotModified"
    params = ", ".join(_signature(op, listing=False, conditional=None))
    call = f"self._client.request({op.const}, {op.cast}, {', '.join(_request_args(op, listing=False))})"
    lines += [
        f"    {define} {op.place.method}({params}) -> {returns}:",
        _docs(op),
        f"        return cast({returns!r}, {wait}{call})",
        "",
    ]
    return lines


def list_all_name(op: Op) -> str:
    name = op.place.method
    return "list_all" + name[4:] if name.startswith("list") else name + "_all"


def _list_all(op: Op, is_async: bool) -> list[str]:
    item = op.item
    iterator = "AsyncIterator" if is_async else "Iterator"
    params = ", ".join(_signature(op, listing=True, conditional=None))
    call = (
        f"self._client.iterate({op.const}, {op.cast}, {', '.join(_request_args(op, listing=True))})"
    )
    extra = " Every row, in cursor mode: pages of `limit` rows, following `nextCursor`."
    return [
        f"    def {list_all_name(op)}({params}) -> {iterator}[{item}]:",
        _docs(op, extra),
        f"        return {call}",
        "",
    ]


def _init(root: Node, homes: set[tuple[str, ...]], ops: list[Op]) -> str:
    lines = [
        '"""The operations of the API, grouped by tag."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    lines += ["from salesplan_client._base import AsyncAPIClient, SyncAPIClient"]
    lines += ["from salesplan_client._resource import AsyncResource, SyncResource"]
    for home in sorted(homes):
        module = "_".join(home)
        cls = camel_class(home)
        lines.append(f"from salesplan_client.resources.{module} import {cls}, {cls}WithRawResponse")
        lines.append(
            f"from salesplan_client.resources.{module}_async import "
            f"Async{cls}, Async{cls}WithRawResponse"
        )
    lines.append("")
    containers = [
        n for n in _walk(root) if n.path and n.path not in homes and not _under(n.path, homes)
    ]
    for node in containers:
        lines += ["", _classes(node, False), "", _classes(node, True)]
    for is_async in (False, True):
        prefix = "Async" if is_async else ""
        client = "AsyncAPIClient" if is_async else "SyncAPIClient"
        lines += [
            "",
            "",
            f"class {prefix}Resources:",
            f"    def __init__(self, client: {client}) -> None:",
        ]
        for name, child in root.children.items():
            lines.append(f"        self.{name} = {prefix}{child.cls}(client)")
        lines += ["", "", f"class {prefix}ResourcesWithRawResponse:"]
        lines.append(f"    def __init__(self, resources: {prefix}Resources) -> None:")
        for name, child in root.children.items():
            lines.append(
                f"        self.{name} = {prefix}{child.cls}WithRawResponse(resources.{name})"
            )
    lines += [
        "",
        "",
        "# operationId → where its method is on a client (`list_all` beside a cursor list).",
    ]
    lines.append("METHODS: dict[str, str] = {")
    for op in ops:
        lines.append(f"    {op.id!r}: {op.place.dotted!r},")
    lines.append("}")
    lines.append("LIST_ALL: dict[str, str] = {")
    for op in ops:
        if op.lists:
            lines.append(f"    {op.id!r}: {'.'.join((*op.place.namespace, list_all_name(op)))!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _under(path: tuple[str, ...], homes: set[tuple[str, ...]]) -> bool:
    return any(path[: len(h)] == h for h in homes)


def events_module(document: dict[str, Any], schemas: Schemas) -> str:
    """Event type → the model of its `data`: from the document's `webhooks` section, else by
    resource (`account.*` → Account)."""
    found: dict[str, str] = {}
    for name, item in (document.get("webhooks") or {}).items():
        post = item.get("post", {}) if isinstance(item, dict) else {}
        schema = post.get("requestBody", {}).get("content", {}).get("application/json", {})
        schema = schemas.resolve(schema.get("schema", {}))
        data = schema.get("properties", {}).get("data", {})
        ref = data.get("$ref", "").rsplit("/", 1)[-1]
        if ref in schemas.class_of:
            found[name] = schemas.class_of[ref]
    if not found:
        for resource, component in EVENT_RESOURCES.items():
            if component in schemas.class_of:
                found[f"{resource}.*"] = schemas.class_of[component]
    lines = [
        '"""The model of each webhook event\'s `data` (`resource.*`: every event of it)."""',
        "",
        "from __future__ import annotations",
        "",
        "from salesplan_client import models",
        "from salesplan_client._models import ApiObject",
        "",
        "EVENT_DATA: dict[str, type[ApiObject]] = {",
    ]
    lines += [f"    {name!r}: models.{cls}," for name, cls in sorted(found.items())]
    lines.append("}")
    return "\n".join(lines) + "\n"
