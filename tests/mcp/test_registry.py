"""The registry that makes a tool one adapter."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic import Field

from salesplan.errors import ValidationFailed
from salesplan.kit.schemas import StrictBody
from salesplan.mcp.registry import TOOLS, ListArgs, ToolArgs, input_schema, mcp_tool


class _Body(StrictBody):
    name: str | None = None
    description: str | None = None


class _PatchArgs(ToolArgs):
    thing_id: uuid.UUID = Field(description="Id.")
    name: str | None = Field(default=None, description="Name.")
    description: str | None = Field(default=None, description="Description.")


def test_body_holds_only_the_arguments_that_were_sent():
    args = _PatchArgs.model_validate({"thingId": str(uuid.uuid4()), "name": "New"})
    assert args.body_of(_Body).sent() == {"name": "New"}


def test_list_args_give_the_rest_list_params():
    class Args(ListArgs):
        sortable = ("createdAt", "name")

    params = Args.model_validate({"limit": 5, "sortBy": "name", "order": "desc"}).list_params()
    assert (params.mode, params.page_size, params.sort_by, params.order) == (
        "cursor",
        5,
        "name",
        "desc",
    )
    with pytest.raises(ValidationFailed):
        Args.model_validate({"sortBy": "slug"}).list_params()


def test_unknown_rate_limit_group_is_refused():
    with pytest.raises(ValueError):
        mcp_tool("nope", scope=None, group="nowhere", description="x")


def test_a_tool_name_is_registered_once():
    async def one(call: Any, args: Any) -> Any:
        return None

    async def two(call: Any, args: Any) -> Any:
        return None

    name = f"testDuplicate{uuid.uuid4().hex[:6]}"
    try:
        mcp_tool(name, scope=None, group="foundation", description="x")(one)
        with pytest.raises(ValueError):
            mcp_tool(name, scope=None, group="foundation", description="x")(two)
    finally:
        TOOLS.pop(name, None)


def test_every_tool_schema_lists_required_arguments_first_and_headers_last():
    for spec in TOOLS.values():
        schema = input_schema(spec)
        names = list(schema["properties"])
        required = schema.get("required", [])
        assert names[: len(required)] == required, spec.name
        assert names[-1] == "headers"
        assert schema["additionalProperties"] is False
