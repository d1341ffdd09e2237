"""Every plans operation of contract §7: operationId, tag, scope and rate-limit group."""

from __future__ import annotations

import pytest

OPERATIONS = {
    # operationId: (method, path, scope, tag)
    "listPlans": ("get", "/api/v1/plans", "plans:read", "plans"),
    "createPlan": ("post", "/api/v1/plans", "plans:write", "plans"),
    "getPlan": ("get", "/api/v1/plans/{planId}", "plans:read", "plans"),
    "updatePlan": ("patch", "/api/v1/plans/{planId}", "plans:write", "plans"),
    "archivePlan": ("delete", "/api/v1/plans/{planId}", "plans:delete", "plans"),
    "restorePlan": ("post", "/api/v1/plans/{planId}/restore", "plans:write", "plans"),
    "listMyTasks": ("get", "/api/v1/tasks", "plans:read", "plan-tasks"),
    "listPlanMilestones": (
        "get",
        "/api/v1/plans/{planId}/milestones",
        "plans:read",
        "plan-milestones",
    ),
    "createPlanMilestone": (
        "post",
        "/api/v1/plans/{planId}/milestones",
        "plans:write",
        "plan-milestones",
    ),
    "getPlanMilestone": (
        "get",
        "/api/v1/plans/{planId}/milestones/{milestoneId}",
        "plans:read",
        "plan-milestones",
    ),
    "updatePlanMilestone": (
        "patch",
        "/api/v1/plans/{planId}/milestones/{milestoneId}",
        "plans:write",
        "plan-milestones",
    ),
    "archivePlanMilestone": (
        "delete",
        "/api/v1/plans/{planId}/milestones/{milestoneId}",
        "plans:delete",
        "plan-milestones",
    ),
    "restorePlanMilestone": (
        "post",
        "/api/v1/plans/{planId}/milestones/{milestoneId}/restore",
        "plans:write",
        "plan-milestones",
    ),
    "reorderPlanMilestones": (
        "post",
        "/api/v1/plans/{planId}/milestones/reorder",
        "plans:write",
        "plan-milestones",
    ),
    "listPlanGoals": ("get", "/api/v1/plans/{planId}/goals", "plans:read", "plan-goals"),
    "createPlanGoal": ("post", "/api/v1/plans/{planId}/goals", "plans:write", "plan-goals"),
    "getPlanGoal": ("get", "/api/v1/plans/{planId}/goals/{goalId}", "plans:read", "plan-goals"),
    "updatePlanGoal": (
        "patch",
        "/api/v1/plans/{planId}/goals/{goalId}",
        "plans:write",
        "plan-goals",
    ),
    "archivePlanGoal": (
        "delete",
        "/api/v1/plans/{planId}/goals/{goalId}",
        "plans:delete",
        "plan-goals",
    ),
    "restorePlanGoal": (
        "post",
        "/api/v1/plans/{planId}/goals/{goalId}/restore",
        "plans:write",
        "plan-goals",
    ),
    "listPlanTasks": ("get", "/api/v1/plans/{planId}/tasks", "plans:read", "plan-tasks"),
    "createPlanTask": ("post", "/api/v1/plans/{planId}/tasks", "plans:write", "plan-tasks"),
    "getPlanTask": ("get", "/api/v1/plans/{planId}/tasks/{taskId}", "plans:read", "plan-tasks"),
    "updatePlanTask": (
        "patch",
        "/api/v1/plans/{planId}/tasks/{taskId}",
        "plans:write",
        "plan-tasks",
    ),
    "archivePlanTask": (
        "delete",
        "/api/v1/plans/{planId}/tasks/{taskId}",
        "plans:delete",
        "plan-tasks",
    ),
}


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
async def test_plans_operations_are_published_with_scope_tag_and_group(
    client, operation_id
) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    method, path, scope, tag = OPERATIONS[operation_id]
    op = doc["paths"][path][method]
    assert op["operationId"] == operation_id
    assert op["x-scopes"] == [scope]
    assert op["x-rate-limit-group"] == "plans"
    assert op["tags"] == [tag]


async def test_list_my_tasks_needs_a_user_backed_token(app) -> None:
    assert app.state.requirements["listMyTasks"].user_token is True
