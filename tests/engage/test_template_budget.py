"""Contract §12 "Templates": one render may use at most 1 s and produce at most 1 MiB; beyond that,
or on any other render error, 422 `unprocessable` (`template_too_expensive` / `template_error`)
at create, update and preview, and the message `failed` with that `lastError` at send. Rendering
never blocks the event loop: other requests are answered meanwhile."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import time
from typing import Any

import pytest

from salesplan.engage import render as merge
from tests.engage.helpers import API, email_template
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor

SLOW = "{% for a in range(100000) %}{% for b in range(3000) %}{% endfor %}{% endfor %}"
HUGE_OUTPUT = "{{ 'x' * 20000000 }}"
HUGE_INTEGER = "{{ 10**5000 }}"
# Expensive only with a contact's values: stored fine, stopped at preview and send.
ONLY_FOR_CONTACTS = "{% if contact.firstName %}" + SLOW + "{% endif %}"

EXPENSIVE = "template_too_expensive"


def create_body(**fields: Any) -> dict[str, Any]:
    return {"name": "T", "channel": "EMAIL", "subject": "Hi", "body": "Hello"} | fields


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"body": SLOW}, EXPENSIVE),
        ({"body": HUGE_OUTPUT}, EXPENSIVE),
        ({"subject": HUGE_INTEGER}, EXPENSIVE),
        ({"bodyHtml": "<p>{{ ('x' * 1000000) ~ ('y' * 100000) }}</p>"}, EXPENSIVE),
        ({"body": "{{ 1 / 0 }}"}, "template_error"),
    ],
)
async def test_create_refuses_a_template_over_its_budget(client, actor, fields, reason) -> None:
    started = time.monotonic()
    resp = await client.post(f"{API}/templates", json=create_body(**fields), headers=actor.headers)
    error = assert_envelope(resp, 422, "unprocessable")
    assert error["details"] == {"reason": reason}
    assert len(resp.content) < 10_000
    assert time.monotonic() - started < 15  # 1 s of render and a margin, never 20 s
    listed = await client.get(f"{API}/templates", headers=actor.headers)
    assert listed.json()["data"] == []


async def test_update_refuses_a_template_over_its_budget(client, actor) -> None:
    tpl = await email_template(client, actor)
    for body, reason in (
        (SLOW, EXPENSIVE),
        (HUGE_OUTPUT, EXPENSIVE),
        ("{{ 1/0 }}", "template_error"),
    ):
        resp = await client.patch(
            f"{API}/templates/{tpl['id']}", json={"body": body}, headers=actor.headers
        )
        assert assert_envelope(resp, 422, "unprocessable")["details"] == {"reason": reason}
    unchanged = await client.get(f"{API}/templates/{tpl['id']}", headers=actor.headers)
    assert unchanged.json()["body"] == "Hello"


async def test_draft_text_over_its_budget_is_refused(client, actor) -> None:
    base = {"channel": "EMAIL", "subject": "Hi"}
    resp = await client.post(
        f"{API}/drafts", json=base | {"body": HUGE_OUTPUT}, headers=actor.headers
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"] == {"reason": EXPENSIVE}
    draft = await client.post(f"{API}/drafts", json=base | {"body": "Hi"}, headers=actor.headers)
    assert draft.status_code == 201, draft.text
    resp = await client.patch(
        f"{API}/drafts/{draft.json()['id']}", json={"body": SLOW}, headers=actor.headers
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"] == {"reason": EXPENSIVE}


async def test_a_slow_preview_leaves_the_server_answering_others(client, actor, db) -> None:
    other = await make_actor(db)
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    tpl = await email_template(client, actor, body=ONLY_FOR_CONTACTS)
    # The render pool is started (its child processes are there) before the measurement.
    await merge.render("s", "warm", None, merge.merge_context(contact, None, None, None))

    preview = asyncio.create_task(
        client.post(
            f"{API}/templates/{tpl['id']}/preview",
            json={"contactId": str(contact.id)},
            headers=actor.headers,
        )
    )
    await asyncio.sleep(0.3)  # the preview is rendering now (its render takes ~1 s)
    health = await client.get("/healthz")
    others = await client.get("/api/v1/accounts", headers=other.in_org())
    # Both answered while the render was still in progress.
    assert not preview.done()
    assert health.status_code == 200
    assert others.status_code == 200
    resp = await preview
    assert assert_envelope(resp, 422, "unprocessable")["details"] == {"reason": EXPENSIVE}


async def test_preview_of_a_huge_output_is_422_not_20_mb(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    body = "{% if contact.firstName %}" + HUGE_OUTPUT + "{% endif %}"
    tpl = await email_template(client, actor, body=body)
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"] == {"reason": EXPENSIVE}
    assert len(resp.content) < 10_000


async def test_a_sandbox_process_stuck_in_c_code_is_killed_and_replaced() -> None:
    """What the child cannot stop itself (a long operation in C), the pool stops: here the child
    is frozen with SIGSTOP, so that it answers nothing at all."""
    context = merge.merge_context(merge._Blank(), None, None, None)
    pool = merge.pool()
    await merge.render_many([merge.Job("s", "warm", None, context)])
    # The frozen child is the only idle one, so the next render takes it.
    others: list[Any] = []
    while True:
        try:
            others.append(pool._idle.get_nowait())
        except queue.Empty:
            break
    child = others.pop()
    os.kill(child.process.pid, signal.SIGSTOP)
    pool._idle.put(child)
    started = time.monotonic()
    (stopped,) = await merge.render_many([merge.Job("s", "Hello", None, context)])
    assert isinstance(stopped, merge.RenderFailure) and stopped.reason == EXPENSIVE
    assert time.monotonic() - started < 10
    assert child.process.poll() is not None  # killed
    for taken in others:
        pool._idle.put(taken)
    (fine,) = await merge.render_many([merge.Job("s", "Hello {{ 1 + 1 }}", None, context)])
    assert isinstance(fine, merge.Rendered) and fine.body == "Hello 2"
