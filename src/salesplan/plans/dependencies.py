"""What every plans route declares: the caller's context by scope, the tags, the list
answer."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

from fastapi import Query
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import PaginationMeta

Read = Annotated[RequestContext, require("plans:read", "plans")]
Write = Annotated[RequestContext, require("plans:write", "plans")]
Delete = Annotated[RequestContext, require("plans:delete", "plans")]
UserRead = Annotated[RequestContext, require("plans:read", "plans", user_token=True)]
IncludeArchived = Annotated[bool, Query(alias="includeArchived")]
Completed = Annotated[bool | None, Query()]

PLANS: list[str | Enum] = ["plans"]
MILESTONES: list[str | Enum] = ["plan-milestones"]
GOALS: list[str | Enum] = ["plan-goals"]
TASKS: list[str | Enum] = ["plan-tasks"]
NO_CONTENT: dict[int | str, dict[str, Any]] = {204: {"description": "Archived"}}


def listed(items: list[dict[str, Any]], meta: PaginationMeta) -> Response:
    return json_response({"data": items, "pagination": meta.model_dump(by_alias=True)})
