"""Contract §16 across processes: two `salesplan serve` processes on one PostgreSQL and one
Redis. A buyer asks for a code on one and signs in on the other; revoking the share (through
either) ends the room session at once on both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from salesplan.engage.delivery.worker import run_delivery
from salesplan.worker.context import WorkerContext
from tests.engage_delivery.conftest import SmtpSink, smtp
from tests.mcp.test_processes import _start, _stop, _wait_healthy, backend_env
from tests.ratelimit.conftest import free_port
from tests.rooms.helpers import code_in, csrf_of, make_deal, make_share, token_of

__all__ = ["backend_env", "smtp"]

SECRET = "two-processes-test-secret"  # backend_env's: both processes sign alike


@dataclass
class Pair:
    origins: list[str]


@pytest.fixture
def pair(backend_env: dict[str, str], app: object, tmp_path: Path) -> Iterator[Pair]:
    ports = [free_port(), free_port()]
    env = backend_env | {"SALESPLAN_PUBLIC_URL": f"http://127.0.0.1:{ports[0]}"}
    processes = [_start(env, port, tmp_path) for port in ports]
    try:
        origins = [f"http://127.0.0.1:{port}" for port in ports]
        for process, origin in zip(processes, origins, strict=True):
            _wait_healthy(process, origin)
        yield Pair(origins)
    finally:
        for process in processes:
            _stop(process)


async def _deliver(app: object, smtp: SmtpSink) -> int:
    """The delivery job with the processes' secret (it opens what they sealed)."""
    settings = app.state.settings.model_copy(  # type: ignore[attr-defined]
        update={"secret_key": SECRET, "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
                "smtp_from": "rooms@seller.example"}
    )  # fmt: skip
    settings.__dict__.pop("signing_key", None)  # derived once per Settings: derive it again
    context = WorkerContext(
        settings=settings,
        engine=app.state.engine,  # type: ignore[attr-defined]
        sessionmaker=app.state.sessionmaker,  # type: ignore[attr-defined]
        worker_id="rooms-processes",
    )
    return await run_delivery(context)


async def test_revoking_ends_the_room_session_at_once_on_every_process(
    pair: Pair, app, client, db, actor, smtp
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    token = token_of(share["url"])
    one, two = (f"{origin}/rooms/{token}" for origin in pair.origins)
    async with httpx.AsyncClient(timeout=30) as browser:
        page = await browser.get(one)
        assert page.status_code == 200
        resp = await browser.post(one + "/code", data={"csrf_token": csrf_of(page.text)})
        assert resp.status_code == 303
        assert await _deliver(app, smtp) == 1
        page = await browser.get(two + "/code")
        resp = await browser.post(
            two + "/sign-in", data={"csrf_token": csrf_of(page.text), "code": code_in(smtp)}
        )
        assert resp.status_code == 303, resp.text
        for room in (one, two):  # the session is good on both
            page = await browser.get(room)
            assert page.status_code == 200 and "Send the security questionnaire" in page.text
        # Revoked through the second process's API; the first refuses at once.
        revoked = await browser.delete(
            f"{pair.origins[1]}/api/v1/plans/{deal.plan_id}/shares/{share['id']}",
            headers=actor.in_org(),
        )
        assert revoked.status_code == 204
        for room in (one, two):
            page = await browser.get(room)
            assert page.status_code == 410 and "Send the security questionnaire" not in page.text
            ics = await browser.get(room + "/plan.ics")
            assert ics.status_code == 410 and "VCALENDAR" not in ics.text
