"""Output schemas of the read tools (contract §9, issue 33 item 2).

A read tool (derived from a GET route) publishes as `outputSchema` the JSON Schema that the
OpenAPI document gives its route's 200 response, made standalone: every `$ref` into
`#/components/schemas` is resolved inside the schema itself, compactly (salesplan.mcp.compact:
a part used once inlined, a shared or recursive one once in the schema's own `$defs`; no
prose), so that a client validates `structuredContent` without the OpenAPI document. MCP wants
an object schema: a response that is not an object is published as `{"result": <it>}`, and the
call answers it that way too (`salesplan.mcp.pipeline.body_result`).

The schemas come from the served document itself (`app.openapi()`), so that the two cannot
drift; they are computed once per app, at the first `tools/list`. The server does not validate
its own results against them (the SDK does not when a tool publishes a schema without an output
model): the REST response model already shaped the body, and the tests validate every read
tool's result on real data."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic.json_schema import JsonSchemaValue

from salesplan.mcp.compact import compact_output
from salesplan.mcp.registry import TOOLS, ToolSpec


def publishes_output(spec: ToolSpec) -> bool:
    """A read tool derived from a route that answers the REST body as it is: it has an output
    schema (the body's) and structured results."""
    return spec.read_only and spec.run is None and spec.result is None


def _success_schema(operation: dict[str, Any]) -> JsonSchemaValue | None:
    responses = operation.get("responses", {})
    for status in ("200", "201", "207"):
        content = responses.get(status, {}).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        if isinstance(schema, dict):
            return schema
    return None


def as_object(schema: JsonSchemaValue) -> JsonSchemaValue:
    """MCP requires an object output schema: anything else is wrapped as `{"result": …}`."""
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def output_schemas(app: FastAPI) -> dict[str, JsonSchemaValue]:
    """Tool name → published output schema, for every read tool; computed once per app."""
    cached: dict[str, JsonSchemaValue] | None = getattr(app.state, "mcp_output_schemas", None)
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
    schemas: dict[str, JsonSchemaValue] = {}
    for name, spec in TOOLS.items():
        if not publishes_output(spec):
            continue
        operation = operations.get(name)
        success = _success_schema(operation) if operation is not None else None
        schema = as_object(compact_output(success, components)) if success else {"type": "object"}
        schemas[name] = schema  # JSON Schema 2020-12, MCP's default dialect
    app.state.mcp_output_schemas = schemas
    return schemas
