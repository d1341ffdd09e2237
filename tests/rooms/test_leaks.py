"""Contract §16: a hidden item, every task and goal of a hidden milestone, an internal comment
and a seller's e-mail address never reach a buyer — by any path. This walks every answer a
room gives (each page, the ICS, every e-mail, each action's outcome, the error pages, the
headers) for a plan that has all of them, and looks for each."""

from __future__ import annotations

from typing import Any

import httpx

from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import (
    DOMAIN,
    SECRETS,
    Buyer,
    code_in,
    csrf_of,
    deliver,
    make_deal,
    make_share,
    token_of,
)

__all__ = ["smtp"]


def _answer(resp: httpx.Response) -> str:
    head = "\n".join(f"{k}: {v}" for k, v in resp.headers.items())
    return f"{resp.status_code}\n{head}\n\n{resp.text}"


async def test_nothing_hidden_reaches_the_buyer_by_any_path(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, allowInvites=True)
    # The seller also e-mails the link (the send's e-mail is an answer the buyer sees).
    sent = await client.post(
        f"{PLANS}/{deal.plan_id}/shares/{share['id']}/send", headers=actor.in_org()
    )
    assert sent.status_code == 202
    answers: list[str] = []
    ids = deal.ids
    async with Buyer(app, token_of(share["url"])) as buyer:

        async def walk(method: str, path: str, data: dict[str, str] | None = None) -> Any:
            if method == "GET":
                resp = await buyer.http.get(buyer.home + path)
            else:
                form = {"csrf_token": csrf_of(buyer.page), **(data or {})}
                resp = await buyer.http.post(buyer.home + path, data=form)
            answers.append(_answer(resp))
            if resp.status_code == 303:
                follow = await buyer.http.get(resp.headers["location"].split("#")[0])
                answers.append(_answer(follow))
                resp = follow
            if "csrf_token" in resp.text:
                buyer.page = resp.text
            return resp

        await walk("GET", "")
        await walk("GET", "/code")
        await walk("POST", "/sign-in", {"code": "000000"})  # before any code: an error page
        await walk("POST", "/code")
        await deliver(app, smtp)
        await walk("POST", "/sign-in", {"code": "999999" if code_in(smtp) != "999999" else "0"})
        await walk("POST", "/sign-in", {"code": code_in(smtp)})
        await walk("GET", "")
        await walk("GET", "/plan.ics")
        for name in ids:
            if not name.endswith("milestone") and not name.endswith("goal"):
                await walk("POST", f"/tasks/{ids[name]}/completion", {"completed": "true"})
                await walk("POST", f"/tasks/{ids[name]}/comments", {"body": "A buyer note"})
        await walk("POST", "/invitations", {"email": f"linus@{DOMAIN}"})
        await walk("POST", "/invitations", {"email": "eve@elsewhere.example"})
        await walk("GET", "")
        await walk("GET", "/plan.ics")
        await walk("POST", "/sign-out")
        await walk("GET", "")
    await deliver(app, smtp)
    mails = [raw.decode("utf-8", "replace") for raw in smtp.raw]
    # link (send), code, invite: every e-mail a buyer gets
    assert len(mails) == 3, [m[:200] for m in mails]
    room_page = next(a for a in answers if "Send the security questionnaire" in a)
    assert "Run the pilot" in room_page  # the walk did see the room
    for secret in SECRETS:
        for answer in answers + mails:
            assert secret not in answer, (secret, answer[:400])
    # Nor their ids: a hidden task's id appears in no answer either.
    for name in ("hidden_task", "hidden_milestone_task", "hidden_milestone", "hidden_goal"):
        for answer in answers + mails:
            assert ids[name] not in answer, name
