"""Issue 38: one organization may take at most half of the admission gate (db.AdmissionGate),
so that while its requests wait (on a lock, a slow statement), another organization's requests
still get in instead of a 503."""

from __future__ import annotations

import asyncio

from salesplan.db import AdmissionGate
from salesplan.middleware import _admission_key
from tests.fixtures.factories import make_actor
from tests.foundation.test_admission import gate_of


async def test_one_key_holds_at_most_its_share_and_others_pass() -> None:
    gate = AdmissionGate(4, timeout=5)
    assert gate.share == 2
    assert await gate.enter("a") and await gate.enter("a")
    third_a = asyncio.create_task(gate.enter("a"))
    await asyncio.sleep(0.01)
    assert not third_a.done()  # two places are free, but not for "a"
    assert await gate.enter("b") and await gate.enter("b")  # "b" passes the waiting "a"
    assert gate.active == 4
    gate.leave("b")
    await asyncio.sleep(0.01)
    assert not third_a.done()  # a free place, still not for "a"
    gate.leave("a")  # one of "a"'s own: now "a" is under its share
    assert await third_a
    assert gate.held == {"a": 2, "b": 1} and gate.active == 3
    for key in ("a", "a", "b"):
        gate.leave(key)
    assert gate.active == 0 and gate.held == {}


async def test_requests_without_a_key_are_not_capped() -> None:
    gate = AdmissionGate(2, timeout=5)
    assert await gate.enter() and await gate.enter()
    assert gate.active == 2
    gate.leave()
    gate.leave()
    assert gate.active == 0


def test_the_key_is_the_named_organization_else_the_credentials() -> None:
    def scope(headers: list[tuple[bytes, bytes]], query: bytes = b"") -> dict:
        return {"headers": headers, "query_string": query}

    org = b"0190A0A0-0000-7000-8000-000000000001"
    named = _admission_key(scope([(b"x-organization-id", org), (b"authorization", b"Bearer k")]))
    assert named == "org:" + org.decode().lower()
    assert _admission_key(scope([], b"limit=5&organizationId=" + org)) == named
    by_token = _admission_key(scope([(b"authorization", b"Bearer k")]))
    assert by_token is not None and len(by_token) == len("token:") + 64  # hashed, not kept
    assert _admission_key(scope([(b"x-organization-id", b" ")])) is None
    assert _admission_key(scope([])) is None


async def test_while_one_organizations_requests_wait_anothers_get_through(
    app, client, actor, db
) -> None:
    other = await make_actor(db)
    with gate_of(app, AdmissionGate(4, timeout=0.3)) as gate:
        # Two of the first organization's requests are in, waiting on a lock.
        mine = f"org:{actor.org.id}"
        assert await gate.enter(mine) and await gate.enter(mine)
        more_of_mine = [
            asyncio.create_task(client.get("/api/v1/accounts", headers=actor.in_org()))
            for _ in range(3)
        ]
        await asyncio.sleep(0.02)
        theirs = await asyncio.gather(
            *(client.get("/api/v1/accounts", headers=other.in_org()) for _ in range(2))
        )
        theirs += [await client.get("/api/v1/accounts", headers=other.in_org()) for _ in range(4)]
        assert [r.status_code for r in theirs] == [200] * 6
        # The first organization's extra requests waited for its own places, and gave up.
        assert [r.status_code for r in await asyncio.gather(*more_of_mine)] == [503] * 3
        gate.leave(mine)
        gate.leave(mine)
        assert gate.active == 0 and gate.held == {}
