"""Buyer sign-in (contract §16): a GET shows the plan's name and changes nothing; a POST
e-mails a 6-digit code (10 minutes, 5 tries, 5 an hour per share, per-IP limits); the right
code sets a room session cookie bound to the share; revoked 410, expired says so, unknown 404."""

from __future__ import annotations

import re
import statistics
import time
import uuid
from datetime import timedelta

from sqlalchemy import func, select, update

from salesplan.kit.clock import utcnow
from salesplan.models.engage_delivery import EngageMessage
from salesplan.models.rooms import PlanShare, PlanShareCode, PlanShareSession
from salesplan.rooms.access import cookie_name
from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.plans.test_queries import counting
from tests.rooms.helpers import (
    Buyer,
    code_in,
    csrf_of,
    deliver,
    mail_text,
    make_deal,
    make_share,
    suppress,
    token_of,
)

__all__ = ["smtp"]


async def _count(db, model) -> int:
    return int((await db.execute(select(func.count()).select_from(model))).scalar_one())


async def test_opening_the_link_shows_the_plan_and_changes_nothing(app, client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        for path in ("", "", "/code", "/plan.ics"):
            resp = await buyer.get(path)
            if path == "/plan.ics":  # not signed in: back to the link's page
                assert resp.status_code == 303
                continue
            assert resp.status_code == 200
            assert "Buyer Inc rollout" in resp.text
        page = (await buyer.get()).text
    assert "E-mail me a code" in page
    assert "Send the security questionnaire" not in page  # nothing of the plan but its name
    assert await _count(db, PlanShareCode) == 0
    assert await _count(db, EngageMessage) == 0
    assert await _count(db, PlanShareSession) == 0
    row = await db.get(PlanShare, uuid.UUID(share["id"]))
    assert row is not None and row.last_viewed_at is None


async def test_the_right_code_sets_a_room_session_cookie(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        resp = await buyer.post("/code")
        assert resp.status_code == 200 and "Code" in resp.text
        assert await deliver(app, smtp) == 1
        mail = smtp.received[-1]
        assert mail["To"] == f"ada@{deal.account.domain}"
        code = code_in(smtp)
        # The code is stored only as a keyed hash, and the outbox kept a placeholder only.
        stored = (await db.execute(select(PlanShareCode.code_hash))).scalar_one()
        assert code not in stored
        queued = (await db.execute(select(EngageMessage.body, EngageMessage.sealed))).one()
        assert code not in queued.body and queued.sealed is None
        resp = await buyer.http.post(
            buyer.home + "/sign-in", data={"csrf_token": csrf_of(buyer.page), "code": code}
        )
        assert resp.status_code == 303 and resp.headers["location"] == buyer.home
        cookie = resp.headers["set-cookie"]
        assert cookie.startswith(cookie_name(uuid.UUID(share["id"])) + "=")
        attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
        assert {"httponly", "path", "samesite", "max-age"} <= attributes
        assert "Path=/rooms/" in cookie and "SameSite=lax" in cookie
        assert "Max-Age=2592000" in cookie
        assert "secure" not in attributes  # the test server's public URL is http
        page = await buyer.get()
        assert page.status_code == 200 and "Send the security questionnaire" in page.text
        # The code is spent.
        resp = await buyer.post("/sign-in", {"code": code})
        assert resp.status_code == 400


async def test_the_cookie_is_secure_when_the_public_url_is_https(
    app, client, db, actor, smtp, monkeypatch
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    monkeypatch.setattr(app.state.settings, "public_url", "https://plans.example")
    async with Buyer(app, token_of(share["url"]), "https://plans.example") as buyer:
        await buyer.get()
        await buyer.post("/code")
        await deliver(app, smtp)
        resp = await buyer.http.post(
            buyer.home + "/sign-in", data={"csrf_token": csrf_of(buyer.page), "code": code_in(smtp)}
        )
        assert resp.status_code == 303
        assert "; secure" in resp.headers["set-cookie"].lower()


async def test_guessing_stops_after_five_tries(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        await buyer.post("/code")
        await deliver(app, smtp)
        right = code_in(smtp)
        wrong = f"{(int(right) + 1) % 10**6:06d}"
        lefts = []
        for _ in range(5):
            resp = await buyer.post("/sign-in", {"code": wrong})
            assert resp.status_code == 400
            lefts.append(resp.text)
        assert "4 tries left" in lefts[0] and "1 try left" in lefts[3]
        assert "tried too often" in lefts[4]
        # The right code no longer opens the room: its five tries are spent.
        resp = await buyer.post("/sign-in", {"code": right})
        assert resp.status_code == 400 and "Ask for a new code" in resp.text
        assert await _count(db, PlanShareSession) == 0
        attempts = (await db.execute(select(PlanShareCode.attempts))).scalar_one()
        assert attempts == 5
        # A malformed code spends nothing.
        resp = await buyer.post("/sign-in", {"code": "12a4"})
        assert resp.status_code == 400 and "6 digits" in resp.text


async def test_a_code_expires_after_ten_minutes(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        await buyer.post("/code")
        await deliver(app, smtp)
        row = (await db.execute(select(PlanShareCode))).scalar_one()
        assert timedelta(minutes=9) < row.expires_at - row.created_at <= timedelta(minutes=10)
        await db.execute(update(PlanShareCode).values(expires_at=utcnow() - timedelta(seconds=1)))
        await db.commit()
        resp = await buyer.post("/sign-in", {"code": code_in(smtp)})
        assert resp.status_code == 400 and "expired" in resp.text


async def test_at_most_five_codes_an_hour_per_share(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        for _ in range(5):
            assert (await buyer.post("/code")).status_code == 200
        resp = await buyer.post("/code")
        assert resp.status_code == 429 and "5 codes" in resp.text
    assert await _count(db, PlanShareCode) == 5
    assert await deliver(app, smtp) == 5
    # Only the newest code counts (the mails arrive in any order: match them to the outbox).
    queued = (
        (
            await db.execute(
                select(EngageMessage.rfc_message_id).order_by(
                    EngageMessage.created_at, EngageMessage.id
                )
            )
        )
        .scalars()
        .all()
    )
    by_id = {m["Message-ID"]: m for m in smtp.received}
    codes = [re.search(r"\b(\d{6})\b", mail_text(by_id[i])).group(1) for i in queued]  # type: ignore[union-attr]
    async with Buyer(app, token_of(share["url"])) as again:
        await again.get()
        if codes[0] != codes[-1]:
            assert (await again.post("/sign-in", {"code": codes[0]})).status_code == 400
        resp = await again.post("/sign-in", {"code": codes[-1]})
        assert resp.status_code == 200 and "Sign out" in resp.text


async def test_a_suppressed_address_gets_no_code(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    await suppress(db, actor, f"ada@{deal.account.domain}")
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        resp = await buyer.post("/code")
        assert resp.status_code == 422 and "opted out" in resp.text
    assert await _count(db, PlanShareCode) == 0 and await _count(db, EngageMessage) == 0


async def test_every_form_needs_its_csrf_token(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        for path in ("/code", "/sign-in", "/sign-out", "/invitations",
                     f"/tasks/{deal.ids['buyer_task']}/completion",
                     f"/tasks/{deal.ids['buyer_task']}/comments"):  # fmt: skip
            resp = await buyer.http.post(buyer.home + path, data={"code": "123456"})
            assert resp.status_code == 400, path
            resp = await buyer.http.post(
                buyer.home + path, data={"csrf_token": "forged", "code": "123456"}
            )
            assert resp.status_code == 400, path
    assert await _count(db, PlanShareCode) == 0


async def test_the_sign_in_posts_are_limited_per_address(app, client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    limit = app.state.settings.ip_rate_limit_per_minute
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.get()
        statuses = [
            (await buyer.post("/sign-in", {"code": "000000"})).status_code for _ in range(limit + 1)
        ]
    assert set(statuses[:limit]) == {400}
    assert statuses[limit] == 429


async def test_revoked_expired_unknown_and_archived(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    revoked = await make_share(client, deal)
    expired = await make_share(client, deal, contactId=str(deal.grace.id))
    await client.delete(f"{PLANS}/{deal.plan_id}/shares/{revoked['id']}", headers=actor.in_org())
    await db.execute(
        update(PlanShare)
        .where(PlanShare.id == uuid.UUID(expired["id"]))
        .values(expires_at=utcnow() - timedelta(minutes=1))
    )
    await db.commit()
    async with Buyer(app, token_of(revoked["url"])) as buyer:
        for path in ("", "/code", "/plan.ics"):
            resp = await buyer.get(path)
            assert resp.status_code == 410 and "turned off" in resp.text
            assert "Buyer Inc rollout" not in resp.text
    async with Buyer(app, token_of(expired["url"])) as buyer:
        resp = await buyer.get()
        assert resp.status_code == 410 and "expired" in resp.text
    async with Buyer(app, "x" * 43) as buyer:
        resp = await buyer.get()
        assert resp.status_code == 404 and "does not open a plan" in resp.text
        resp = await buyer.http.post(buyer.home + "/code", data={"csrf_token": "x"})
        assert resp.status_code == 400  # a forged form first; never a code
    live = await make_share(client, deal)
    await client.delete(f"{PLANS}/{deal.plan_id}", headers=actor.in_org())
    async with Buyer(app, token_of(live["url"])) as buyer:
        assert (await buyer.get()).status_code == 410


async def test_revoking_ends_the_room_session_at_once(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await client.delete(f"{PLANS}/{deal.plan_id}/shares/{share['id']}", headers=actor.in_org())
        resp = await buyer.get()
        assert resp.status_code == 410 and "Send the security questionnaire" not in resp.text
        resp = await buyer.get("/plan.ics")
        assert resp.status_code == 410 and "BEGIN:VCALENDAR" not in resp.text


async def test_a_room_session_opens_only_its_own_share(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    mine = await make_share(client, deal)
    theirs = await make_share(client, deal, contactId=str(deal.grace.id))
    async with Buyer(app, token_of(mine["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        buyer.token = token_of(theirs["url"])
        resp = await buyer.get()
        assert resp.status_code == 200 and "E-mail me a code" in resp.text
        assert "Send the security questionnaire" not in resp.text
        # The other share's session cookie, under this share's name, opens nothing either.
        jar = dict(buyer.http.cookies)
        raw = jar[cookie_name(uuid.UUID(mine["id"]))]
        buyer.http.cookies.set(cookie_name(uuid.UUID(theirs["id"])), raw, path="/rooms/")
        resp = await buyer.get()
        assert "E-mail me a code" in resp.text


async def test_signing_out_ends_the_session(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        raw = dict(buyer.http.cookies)[cookie_name(uuid.UUID(share["id"]))]
        resp = await buyer.post("/sign-out")
        assert "E-mail me a code" in resp.text
        buyer.http.cookies.set(cookie_name(uuid.UUID(share["id"])), raw, path="/rooms/")
        assert "E-mail me a code" in (await buyer.get()).text
    assert await _count(db, PlanShareSession) == 0


async def test_an_unknown_link_costs_what_a_revoked_one_does(app, client, db, actor) -> None:
    """Token enumeration learns nothing from timing: an unknown token and a revoked one run
    the same statements (one lookup by the token's hash), and take alike."""
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    await client.delete(f"{PLANS}/{deal.plan_id}/shares/{share['id']}", headers=actor.in_org())
    revoked = token_of(share["url"])
    unknown = token_of(share["url"])[:-4] + "AAAA"
    engine = app.state.engine
    async with Buyer(app, revoked) as one, Buyer(app, unknown) as other:
        await one.get(), await other.get()  # warm up, CSRF cookies set
        with counting(engine) as seen_revoked:
            assert (await one.get()).status_code == 410
        with counting(engine) as seen_unknown:
            assert (await other.get()).status_code == 404
        assert seen_revoked == seen_unknown and len(seen_revoked) == 1
        times: dict[str, list[float]] = {"revoked": [], "unknown": []}
        for _ in range(40):
            for name, buyer in (("revoked", one), ("unknown", other)):
                start = time.perf_counter()
                await buyer.get()
                times[name].append(time.perf_counter() - start)
    revoked_median = statistics.median(times["revoked"])
    unknown_median = statistics.median(times["unknown"])
    # The same class: neither is an order of magnitude apart (the statements are the same).
    assert 0.5 < unknown_median / revoked_median < 2.0, times


async def test_the_worker_clears_old_codes_and_expired_sessions(
    app, client, db, actor, smtp
) -> None:
    from salesplan.jobs.kinds import job_kinds
    from salesplan.jobs.pruning import Periodic
    from tests.engage_delivery.conftest import worker_context

    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)  # one code (used), one session
        await buyer.post("/code")  # a second code, fresh
    old = utcnow() - timedelta(days=2)
    first = (
        (await db.execute(select(PlanShareCode.id).order_by(PlanShareCode.created_at)))
        .scalars()
        .first()
    )
    await db.execute(update(PlanShareCode).where(PlanShareCode.id == first).values(created_at=old))
    await db.execute(update(PlanShareSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    await db.commit()
    pruning = next(
        k for k in job_kinds() if isinstance(k, Periodic) and k.__name__ == "run_room_pruning"
    )
    await pruning(worker_context(app))
    assert await _count(db, PlanShareCode) == 1  # the fresh one stays: it counts this hour
    assert await _count(db, PlanShareSession) == 0
