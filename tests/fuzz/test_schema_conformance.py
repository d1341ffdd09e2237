"""The long schemathesis pass (`make fuzz`: SALESPLAN_FUZZ_EXAMPLES per operation, 200 by
default there), all checks, every operation: 0 5xx and 0 findings (see runner.py for what is
checked and the few refusals no schema can describe); then the stateful phase, operations
chained through the document's links."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

pytest.importorskip("schemathesis")

from tests.fuzz.runner import fuzz, stateful

pytestmark = pytest.mark.skipif(
    "SALESPLAN_FUZZ_EXAMPLES" not in os.environ, reason="make fuzz runs the long pass"
)


async def test_every_response_conforms_to_the_openapi_document(settings, schema, actor) -> None:
    examples = int(os.environ["SALESPLAN_FUZZ_EXAMPLES"])
    fuzz_settings = settings.model_copy(update={"rate_limits_enabled": False})
    started = time.monotonic()
    result = await asyncio.to_thread(fuzz, fuzz_settings, actor.in_org(), examples)
    print(f"\n{result.summary()} in {time.monotonic() - started:.0f} s ({examples} per operation)")
    print("statuses:", dict(sorted(result.statuses.items())))
    print("\n".join(result.distinct))
    assert result.server_errors == 0
    assert result.distinct == []


async def test_stateful_sequences_conform_to_the_openapi_document(settings, schema, actor) -> None:
    """The stateful phase (`make fuzz`: SALESPLAN_FUZZ_SCENARIOS sequences, 100 by default, of
    up to SALESPLAN_FUZZ_STEPS calls, 10 by default) chained through the document's links."""
    scenarios = int(os.environ.get("SALESPLAN_FUZZ_SCENARIOS", "100"))
    steps = int(os.environ.get("SALESPLAN_FUZZ_STEPS", "10"))
    fuzz_settings = settings.model_copy(update={"rate_limits_enabled": False})
    started = time.monotonic()
    result = await asyncio.to_thread(stateful, fuzz_settings, actor.in_org(), scenarios, steps)
    print(f"\n{result.summary()} in {time.monotonic() - started:.0f} s (stateful)")
    print("statuses:", dict(sorted(result.statuses.items())))
    print("\n".join(result.distinct))
    assert result.linked > 0
    assert result.server_errors == 0
    assert result.distinct == []
