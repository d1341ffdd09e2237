"""Defects the long schemathesis pass (`make fuzz`) found, each pinned by a plain test."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "query", ["to=0001-01-05", "to=9999-12-31", "from=9999-12-30&to=9999-12-31"]
)
async def test_analytics_dates_at_the_ends_of_the_calendar_are_a_400_not_a_500(
    client, actor, query: str
) -> None:
    resp = await client.get(f"/api/v1/engage/analytics?{query}", headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["code"] == "validation_error"
