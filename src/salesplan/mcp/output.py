"""Output schemas of the read tools (contract §9, issue 33 item 2).

A read tool (derived from a GET route) publishes as `outputSchema` the JSON Schema that the
OpenAPI document gives its route's 200 response, made standalone: every `$ref` into
`#/components/schemas` is inlined (a recursive one stays a `$ref` into the schema's own
`$defs`), so that a client validates `structuredContent` without the OpenAPI document. MCP wants
an object schema: a response that is not an object is published as `{"result": <it>}`, and the
call answers it that way too (`salesplan.mcp.pipeline.body_result`).

The schemas come from the served document itself (`app.openapi()`), so that the two cannot
drift; they are computed once per app, at the first `tools/list`. The server does not validate
its own results against them (the SDK does not when a tool publishes a schema without an output
model): the REST response model already shaped the body, and the tests validate every read
tool's result on real data."""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI

from salesplan.mcp.registry import TOOLS, ToolSpec

REF_PREFIX = "#/components/schemas/"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def publishes_output(spec: ToolSpec) -> bool:
    """A read tool derived from a route that answers the REST body as it is: it has an output
    schema (the body's) and structured results."""
    return spec.read_only and spec.run is None and spec.result is None


def _success_schema(operation: dict[str, Any]) -> dict[str, Any] | None:
    responses = operation.get("responses", {})
    for status in ("200", "201", "207"):
        content = responses.get(status, {}).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        if isinstance(schema, dict):
            return schema
    return None


def standalone(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `#/components/schemas/…` reference inlined; a reference met again
    inside itself (a recursive model) becomes `#/$defs/<name>`, defined once in `$defs`."""
    recursive: dict[str, Any] = {}

    def resolve(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            name = ref.removeprefix(REF_PREFIX)
            siblings = {k: resolve(v, stack) for k, v in node.items() if k != "$ref"}
            if name in stack:
                if name not in recursive:
                    recursive[name] = None  # placeholder: defined below
                    recursive[name] = resolve(components[name], (name,))
                return {"$ref": f"#/$defs/{name}", **siblings}
            target = resolve(components[name], (*stack, name))
            return {**target, **siblings} if isinstance(target, dict) else target
        return {key: resolve(value, stack) for key, value in node.items()}

    result: dict[str, Any] = resolve(copy.deepcopy(schema), ())
    if recursive:
        result["$defs"] = {**result.get("$defs", {}), **recursive}
    return result


def as_object(schema: dict[str, Any]) -> dict[str, Any]:
    """MCP requires an object output schema: anything else is wrapped as `{"result": …}`."""
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def output_schemas(app: FastAPI) -> dict[str, dict[str, Any]]:
    """Tool name → published output schema, for every read tool; computed once per app."""
    cached: dict[str, dict[str, Any]] | None = getattr(app.state, "mcp_output_schemas", None)
    if cached is not None:
        return cached
    document = app.openapi()
    components = document.get("components", {}).get("schemas", {})
    operations = {
        op["operationId"]: op
        for item in document.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }
    schemas: dict[str, dict[str, Any]] = {}
    for name, spec in TOOLS.items():
        if not publishes_output(spec):
            continue
        operation = operations.get(name)
        success = _success_schema(operation) if operation is not None else None
        schema = as_object(standalone(success, components)) if success else {"type": "object"}
        schema.pop("title", None)
        schemas[name] = {"$schema": JSON_SCHEMA_DIALECT, **schema}
    app.state.mcp_output_schemas = schemas
    return schemas
