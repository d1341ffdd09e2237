"""schemathesis against our own OpenAPI document, in process (issue 18): every operation, with
a valid key and organization, must never answer a 5xx. Bounded in `make test`
(SALESPLAN_FUZZ_EXAMPLES, default 5 per operation); `make fuzz` runs it long."""

from __future__ import annotations

import asyncio
import os

import hypothesis
import pytest
from hypothesis import HealthCheck, given

from salesplan.app import create_app

schemathesis = pytest.importorskip("schemathesis")

EXAMPLES = int(os.environ.get("SALESPLAN_FUZZ_EXAMPLES", "5"))


def _fuzz(settings, headers: dict[str, str]) -> list[str]:

    app = create_app(settings)
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    findings: list[str] = []
    requests = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.startswith("/api/v1/oauth/"):
            continue  # form bodies and RFC 6749 errors: tests/oauth

        @given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
        def run(case) -> None:
            nonlocal requests
            requests += 1
            response = case.call(headers=headers)
            if response.status_code >= 500:
                findings.append(
                    f"{case.method} {case.formatted_path} -> {response.status_code}: "
                    f"{response.text[:200]}"
                )

        run()
    print(f"schemathesis: {requests} requests, {len(findings)} 5xx")
    return findings


async def test_no_operation_answers_a_5xx(settings, schema, actor) -> None:
    fuzz_settings = settings.model_copy(update={"rate_limits_enabled": False})
    findings = await asyncio.to_thread(_fuzz, fuzz_settings, actor.in_org())
    assert findings == []
