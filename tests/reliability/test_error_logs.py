"""What a 500 logs (issue 18, defect 9): the requestId its body shows, with the traceback, and
never the SQL statement's parameters (user data)."""

from __future__ import annotations

import logging

import httpx
import pytest
from sqlalchemy import text

from salesplan.app import create_app
from salesplan.db_dependencies import SessionDep

SECRET = "ada.secret@example.com"


async def test_a_500_logs_its_request_id_and_no_sql_parameters(
    settings, schema, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings)

    @app.get("/boom")
    async def boom(session: SessionDep) -> None:
        await session.execute(
            text("SELECT no_such_column FROM organizations WHERE name = :name"), {"name": SECRET}
        )

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        with caplog.at_level(logging.ERROR):
            resp = await client.get("/boom")
    assert resp.status_code == 500
    request_id = resp.json()["error"]["details"]["requestId"]
    records = [r for r in caplog.records if r.exc_info]
    assert records, "the traceback is logged"
    text_logged = "\n".join(
        r.getMessage() + "\n" + logging.Formatter().formatException(r.exc_info)  # type: ignore[arg-type]
        for r in records
    )
    assert request_id in text_logged
    assert SECRET not in text_logged
