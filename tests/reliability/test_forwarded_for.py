"""X-Forwarded-For is believed only from configured proxies (issue 18, defect 14): per-IP
limits count the peer unless it is in SALESPLAN_TRUSTED_PROXIES (default none)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from salesplan import cli
from salesplan.app import create_app

TOKEN = "/api/v1/oauth/token"


def served_options(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The uvicorn options `salesplan serve` runs with (uvicorn.run captured)."""
    captured: dict[str, Any] = {}
    monkeypatch.setattr(cli, "ensure_migrated", lambda settings: None)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: captured.update(kw))
    result = CliRunner().invoke(cli.app, ["serve"])
    assert result.exit_code == 0, result.output
    return {k: v for k, v in captured.items() if k in ("proxy_headers", "forwarded_allow_ips")}


async def _statuses(settings, options: dict[str, Any], peer: str) -> list[int]:
    app = create_app(settings)
    config = uvicorn.Config(app, **options)
    config.load()
    transport = httpx.ASGITransport(
        app=config.loaded_app, raise_app_exceptions=False, client=(peer, 40000)
    )
    statuses = []
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        for i in range(4):
            resp = await client.post(
                TOKEN,
                data={"grant_type": "client_credentials"},
                headers={"X-Forwarded-For": f"203.0.113.{i}"},
            )
            statuses.append(resp.status_code)
    return statuses


async def test_forwarded_for_from_an_untrusted_peer_is_ignored(
    settings, schema, monkeypatch
) -> None:
    options = served_options(monkeypatch)
    limited = settings.model_copy(update={"ip_rate_limit_per_minute": 2})
    statuses = await _statuses(limited, options, "127.0.0.1")
    assert statuses[2:] == [429, 429]


async def test_forwarded_for_from_a_trusted_proxy_names_the_client(
    settings, schema, monkeypatch
) -> None:
    options = served_options(monkeypatch)
    trusting = settings.model_copy(
        update={"ip_rate_limit_per_minute": 2, "trusted_proxies": "127.0.0.1"}
    )
    statuses = await _statuses(trusting, options, "127.0.0.1")
    assert 429 not in statuses
    distrusting = trusting.model_copy(update={"trusted_proxies": "10.0.0.1"})
    statuses = await _statuses(distrusting, options, "127.0.0.1")
    assert statuses[2:] == [429, 429]
