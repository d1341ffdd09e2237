"""Slack webhooks through the outbound guard (contract §12, issue 27 item 1): refused at save
time (service, CLI, settings page) and at send time, on a server whose public URL is not
loopback; the catcher standing for an internal service receives nothing, and no server's reply
is ever copied into `lastError`."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys

import pytest

from salesplan.engage.delivery.integrations import set_integration
from salesplan.engage.delivery.worker import run_delivery
from salesplan.errors import Unprocessable
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import send
from tests.engage_delivery.test_worker import item
from tests.feed.test_settings_page import DEV, save
from tests.foundation.test_cli import cli_db, run_cli
from tests.oauth.flow import sign_in
from tests.outbound.conftest import SECRET_BODY, Listener, http_answer, odd_spellings

__all__ = ["cli_db"]

SLACK = {"channel": "SLACK", "to": "#deals", "body": "Signed!"}


async def _stored(db: object, app: object, org_id: object, url: str) -> None:
    await set_integration(db, app.state.settings, org_id, slack_webhook_url=url)  # type: ignore[arg-type,attr-defined]
    await db.commit()  # type: ignore[attr-defined]


async def _sent_once(app: object, client: object, actor: object) -> dict[str, object]:
    message = (await send(client, actor, SLACK)).json()["message"]  # type: ignore[arg-type]
    await run_delivery(worker_context(app))
    return await item(client, actor, message["id"])


async def test_refused_webhook_urls_are_422_at_save_time(app, db, actor, catcher) -> None:
    for url in [
        *odd_spellings(catcher.port),
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1:6379/",
        "http://[fe80::1]/",
        "http://0.0.0.0:5432/",
    ]:
        with pytest.raises(Unprocessable) as caught:
            await set_integration(db, app.state.settings, actor.org.id, slack_webhook_url=url)
        assert caught.value.details["reason"] == "destination_not_allowed", url
    await db.rollback()
    assert catcher.connections == 0


async def test_a_destination_refused_at_send_time_is_not_contacted(
    app, client, db, actor, catcher, outbound_allow
) -> None:
    """Allowed when saved (the name resolved elsewhere then, say), refused when sending."""
    await _stored(db, app, actor.org.id, catcher.url(path="/services/T/B/X"))
    outbound_allow("")
    done = await _sent_once(app, client, actor)
    assert done["status"] == "failed"
    assert done["lastError"] == "destination not allowed"
    assert catcher.connections == 0


async def test_a_redirect_to_a_refused_address_is_not_followed(
    app, client, db, actor, catcher, redirector, outbound_allow
) -> None:
    outbound_allow("127.0.0.2/32")
    await _stored(db, app, actor.org.id, redirector.url())
    done = await _sent_once(app, client, actor)
    assert done["status"] == "failed" and done["lastError"] == "Slack 307"
    assert redirector.connections == 1
    assert catcher.connections == 0


async def test_a_server_reply_is_never_copied_into_last_error(
    app, client, db, actor, catcher, outbound_allow
) -> None:
    """The catcher answers 200 with a secret; an allowed one answering 400 gives its status."""
    import tests.outbound.conftest as servers

    bad = servers._serve("127.0.0.1", http_answer("400 Bad Request", SECRET_BODY))
    listener: Listener = next(bad)
    try:
        await _stored(db, app, actor.org.id, listener.url())
        done = await _sent_once(app, client, actor)
    finally:
        next(bad, None)
    assert done["status"] == "failed"
    assert done["lastError"] == "Slack 400"
    assert SECRET_BODY.decode() not in str(done)


async def test_network_failures_all_read_the_same(app, client, db, actor, outbound_allow) -> None:
    """A closed port and a port that accepts and hangs up: one text, no port oracle."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    await _stored(db, app, actor.org.id, f"http://127.0.0.1:{closed}/")
    done = await _sent_once(app, client, actor)
    assert done["lastError"] == "could not connect to the server"
    assert done["status"] != "sent"


async def test_the_settings_page_shows_the_refusal(client, db, app, actor) -> None:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    r = await save(client, actor.org.id, {"slack_webhook_url": "http://169.254.169.254/x"})
    assert r.status_code == 303
    page = (await client.get(DEV)).text
    assert "The destination is not allowed" in page
    assert "Slack webhook URL (set)" not in page
    from salesplan.engage.delivery.integrations import slack_webhook_url

    org_id = actor.org.id
    db.expire_all()
    assert await slack_webhook_url(db, app.state.settings, org_id) is None


def _cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "SALESPLAN_DATABASE_URL": database_url,
        "SALESPLAN_SECRET_KEY": "cli-test-secret",
        "SALESPLAN_PUBLIC_URL": "https://crm.example.com",
    }
    return subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


async def test_the_cli_refuses_with_one_line_and_a_failure_exit(cli_db: str) -> None:
    import json

    org = json.loads(run_cli(cli_db, "admin", "create-org", "--name", "Initech").stdout)["id"]
    for url in ("http://127.1:5432/", "http://169.254.169.254/latest/meta-data/"):
        result = _cli(cli_db, "admin", "set-integration", "--org", org, "--slack-webhook-url", url)
        assert result.returncode != 0
        # Every admin command names its database on stderr first (contract §15); the refusal is
        # the one line after it.
        lines = result.stderr.strip().splitlines()
        assert lines[0].startswith("database: "), result.stderr
        errors = lines[1:]
        assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
        assert "destination_not_allowed" in errors[0], result.stderr
        assert result.stdout == ""


async def test_the_log_holds_no_webhook_url(app, client, db, actor, outbound_allow, caplog) -> None:
    """The webhook URL is a credential: httpx's INFO line naming it is not kept."""
    import tests.outbound.conftest as servers

    ok = servers._serve("127.0.0.1", http_answer("200 OK", b"ok"))
    listener: Listener = next(ok)
    try:
        url = listener.url(path="/services/T0001/B0001/webhook-secret-part")
        await _stored(db, app, actor.org.id, url)
        with caplog.at_level(logging.DEBUG):
            done = await _sent_once(app, client, actor)
    finally:
        next(ok, None)
    assert done["status"] == "sent"
    assert "webhook-secret-part" not in caplog.text
