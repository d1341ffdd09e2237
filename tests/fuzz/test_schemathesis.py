"""The bounded schemathesis pass of `make test` (SALESPLAN_FUZZ_QUICK_EXAMPLES per operation,
default 3), all checks, every operation: 0 5xx and 0 findings (see runner.py); and a bounded
stateful phase (SALESPLAN_FUZZ_QUICK_SCENARIOS sequences, default 10). `make fuzz` runs the
long passes (test_schema_conformance.py) instead."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

pytest.importorskip("schemathesis")

from tests.fuzz.runner import fuzz, stateful

EXAMPLES = int(os.environ.get("SALESPLAN_FUZZ_QUICK_EXAMPLES", "3"))

pytestmark = pytest.mark.skipif(
    "SALESPLAN_FUZZ_EXAMPLES" in os.environ, reason="make fuzz runs the long pass instead"
)


async def test_no_operation_answers_a_5xx_or_disagrees_with_the_document(
    settings, schema, actor
) -> None:
    fuzz_settings = settings.model_copy(update={"rate_limits_enabled": False})
    started = time.monotonic()
    result = await asyncio.to_thread(fuzz, fuzz_settings, actor.in_org(), EXAMPLES)
    print(f"\n{result.summary()} in {time.monotonic() - started:.0f} s ({EXAMPLES} per operation)")
    assert result.server_errors == 0, result.distinct
    assert result.distinct == []


SCENARIOS = int(os.environ.get("SALESPLAN_FUZZ_QUICK_SCENARIOS", "10"))


async def test_stateful_sequences_answer_no_5xx_and_agree_with_the_document(
    settings, schema, actor
) -> None:
    """The stateful phase, bounded (SALESPLAN_FUZZ_QUICK_SCENARIOS sequences of up to 10
    calls): operations chained through the document's links, so that ids are real."""
    fuzz_settings = settings.model_copy(update={"rate_limits_enabled": False})
    started = time.monotonic()
    result = await asyncio.to_thread(stateful, fuzz_settings, actor.in_org(), SCENARIOS, 10)
    print(f"\n{result.summary()} in {time.monotonic() - started:.0f} s (stateful)")
    print("statuses:", dict(sorted(result.statuses.items())))
    print("\n".join(result.distinct))
    assert result.links > 100  # the inferred links exist: the phase is really stateful
    assert result.linked > 0
    assert result.server_errors == 0, result.distinct
    assert result.distinct == []
