"""JSON Schemas written from the spec's field tables (strict: additionalProperties false), and
the validation every plans response in these tests goes through."""

from __future__ import annotations

import re
from typing import Any

import httpx
from jsonschema import Draft202012Validator, FormatChecker

UUID = {"type": "string", "format": "uuid"}
NULL_UUID = {"type": ["string", "null"], "format": "uuid"}
DATE = {"type": ["string", "null"], "format": "date"}
DATETIME = {"type": "string", "format": "date-time"}
NULL_STR = {"type": ["string", "null"]}
NULL_NUM = {"type": ["number", "null"]}


def strict(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "required": required,
    }


PLAN_TASK = strict(
    {
        "id": UUID,
        "planId": UUID,
        "milestoneId": NULL_UUID,
        "title": {"type": "string"},
        "description": NULL_STR,
        "completed": {"type": "boolean"},
        "completedAt": {"type": ["string", "null"], "format": "date-time"},
        "targetDate": DATE,
        "assignedToId": NULL_UUID,
        "createdById": NULL_UUID,
        "createdAt": DATETIME,
        "updatedAt": DATETIME,
    },
    ["id", "planId", "title", "completed", "createdAt"],
)

PLAN_GOAL = strict(
    {
        "id": UUID,
        "planId": UUID,
        "milestoneId": NULL_UUID,
        "title": {"type": "string"},
        "description": NULL_STR,
        "goalType": {"enum": ["MILESTONE_BASED", "QUANTIFIABLE"]},
        "target": NULL_NUM,
        "actualValue": NULL_NUM,
        "unitType": {"enum": ["NUMBER", "DOLLAR", "PERCENTAGE", None]},
        "label": NULL_STR,
        "progress": NULL_NUM,
        "goalTypeCategory": NULL_STR,
        "targetDate": DATE,
        "periodType": {"enum": ["QUARTERLY", "ANNUAL", "OTHER", None]},
        "periodLabel": NULL_STR,
        "allocations": {"type": ["object", "null"]},
        "parentGoalId": NULL_UUID,
        "childGoals": {"type": "array", "items": {"$ref": "#/$defs/PlanGoal"}},
        "createdAt": DATETIME,
        "updatedAt": DATETIME,
    },
    ["id", "planId", "title", "goalType", "createdAt"],
)

PLAN_MILESTONE = strict(
    {
        "id": UUID,
        "planId": UUID,
        "milestone": {"type": "object"},
        "objective": {"type": ["object", "null"]},
        "targetDate": DATE,
        "actualDate": DATE,
        "status": {"enum": ["not_started", "in_progress", "completed"]},
        "sortIndex": {"type": "integer"},
        "prospectOwnerIds": {"type": "array", "items": UUID},
        "subscriberOwnerIds": {"type": "array", "items": UUID},
        "tasks": {"type": "array", "items": {"$ref": "#/$defs/PlanTask"}},
        "goals": {"type": "array", "items": {"$ref": "#/$defs/PlanGoal"}},
        "createdAt": DATETIME,
        "updatedAt": DATETIME,
    },
    ["id", "planId", "milestone", "status", "sortIndex", "createdAt", "updatedAt"],
)

PLAN = strict(
    {
        "id": UUID,
        "name": {"type": "string"},
        "description": NULL_STR,
        "entityType": {"enum": ["OPPORTUNITY", "BUYING_GROUP", "USER", "ACCOUNT"]},
        "entityId": UUID,
        "opportunityId": NULL_UUID,
        "buyingGroupId": NULL_UUID,
        "userId": NULL_UUID,
        "milestones": {"type": "array", "items": {"$ref": "#/$defs/PlanMilestone"}},
        "goals": {"type": "array", "items": {"$ref": "#/$defs/PlanGoal"}},
        "tasks": {"type": "array", "items": {"$ref": "#/$defs/PlanTask"}},
        "createdAt": DATETIME,
        "updatedAt": DATETIME,
    },
    ["id", "name", "entityType", "entityId", "createdAt", "updatedAt"],
)

PAGINATION = strict(
    {
        "hasNextPage": {"type": "boolean"},
        "totalCount": {"type": "integer", "minimum": 0},
        "nextCursor": {"type": "string"},
        "page": {"type": "integer", "minimum": 1},
        "pageSize": {"type": "integer", "minimum": 1},
        "totalPages": {"type": "integer", "minimum": 1},
    },
    ["hasNextPage"],
)

ERROR = strict(
    {
        "error": strict(
            {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
            ["code", "message", "details"],
        )
    },
    ["error"],
)

DEFS = {
    "Plan": PLAN,
    "PlanMilestone": PLAN_MILESTONE,
    "PlanGoal": PLAN_GOAL,
    "PlanTask": PLAN_TASK,
    "PaginationMeta": PAGINATION,
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _list_of(name: str) -> dict[str, Any]:
    return strict(
        {"data": {"type": "array", "items": _ref(name)}, "pagination": _ref("PaginationMeta")},
        ["data", "pagination"],
    )


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator({**schema, "$defs": DEFS}, format_checker=FormatChecker())


PLAN_LIST_RESPONSE = _list_of("Plan")
_ID = r"[0-9a-fA-F-]{36}"
# (method, path pattern, schema) — the first match decides.
ROUTES: list[tuple[str, re.Pattern[str], dict[str, Any]]] = [
    ("GET", re.compile(r"^/api/v1/plans$"), PLAN_LIST_RESPONSE),
    ("GET", re.compile(r"^/api/v1/tasks$"), _list_of("PlanTask")),
    (
        "POST",
        re.compile(rf"^/api/v1/plans/{_ID}/milestones/reorder$"),
        strict({"data": {"type": "array", "items": _ref("PlanMilestone")}}, ["data"]),
    ),
    ("GET", re.compile(rf"^/api/v1/plans/{_ID}/milestones$"), _list_of("PlanMilestone")),
    ("GET", re.compile(rf"^/api/v1/plans/{_ID}/goals$"), _list_of("PlanGoal")),
    ("GET", re.compile(rf"^/api/v1/plans/{_ID}/tasks$"), _list_of("PlanTask")),
    (
        "*",
        re.compile(rf"^/api/v1/plans/{_ID}/milestones(/{_ID}(/restore)?)?$"),
        _ref("PlanMilestone"),
    ),
    ("*", re.compile(rf"^/api/v1/plans/{_ID}/goals(/{_ID}(/restore)?)?$"), _ref("PlanGoal")),
    ("*", re.compile(rf"^/api/v1/plans/{_ID}/tasks(/{_ID})?$"), _ref("PlanTask")),
    ("*", re.compile(rf"^/api/v1/plans(/{_ID}(/restore)?)?$"), _ref("Plan")),
]
VALIDATED = {"count": 0}


def schema_for(method: str, path: str) -> dict[str, Any] | None:
    for m, pattern, schema in ROUTES:
        if (m == "*" or m == method) and pattern.match(path):
            return schema
    return None


async def validate_response(response: httpx.Response) -> None:
    """An httpx response hook: every plans response matches the spec's strict schemas."""
    path = response.request.url.path
    if not (path.startswith("/api/v1/plans") or path == "/api/v1/tasks"):
        return
    await response.aread()
    if response.status_code == 204:
        assert response.content == b"", "204 has no body"
        return
    body = response.json()
    if response.status_code >= 400:
        schema: dict[str, Any] | None = ERROR
    else:
        schema = schema_for(response.request.method, path)
    assert schema is not None, f"no schema for {response.request.method} {path}"
    errors = sorted(validator(schema).iter_errors(body), key=str)
    assert not errors, f"{response.request.method} {path}: {errors[0]}"
    VALIDATED["count"] += 1
