"""Contract §14 (2026-11-27): `POST /engage/suppressions` `{"addresses": [...≤1000], "reason":
"manual"}` (engage:write, admins) imports opt-outs from another system with 207-style
per-address results; an address already suppressed keeps its first reason. The addresses go
through the one suppression path (sends refused, sequences stopped), compared as parsed."""

from __future__ import annotations

from unittest import mock

from sqlalchemy import select

from salesplan.engage.delivery import inbound
from salesplan.engage.delivery.inbound import suppress
from salesplan.models.engage import EngageSuppression
from tests.engage_delivery.test_send import email, send
from tests.fixtures.factories import make_actor, make_key, make_user

API = "/api/v1/engage/suppressions"


async def imported(client, actor, addresses, **extra) -> dict:
    response = await client.post(
        API, json={"addresses": addresses, "reason": "manual", **extra}, headers=actor.in_org()
    )
    assert response.status_code == 207, response.text
    return dict(response.json())


async def test_import_answers_a_result_per_address(client, actor, db) -> None:
    await suppress(db, actor.org.id, "old@x.example", "hard_bounce")
    await db.commit()
    result = await imported(
        client,
        actor,
        ["Ada <ADA@x.example>", "old@x.example", "not an address", "ada@x.example", "b@x.example"],
    )
    rows = result["results"]
    assert [r["index"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["status"] for r in rows] == [201, 200, 400, 200, 201]
    assert rows[0]["data"]["address"] == "ada@x.example"
    assert rows[0]["data"]["reason"] == "manual"
    assert set(rows[0]["data"]) == {"address", "reason", "createdAt"}
    # Already suppressed: kept with its first reason (here and for a repeat in the same call).
    assert rows[1]["data"]["reason"] == "hard_bounce"
    assert rows[3]["data"] == rows[0]["data"]
    assert rows[2]["error"]["code"] == "validation_error"
    assert "data" not in rows[2] and "error" not in rows[0]
    assert all(
        r["address"] == a
        for r, a in zip(
            rows,
            [
                "Ada <ADA@x.example>",
                "old@x.example",
                "not an address",
                "ada@x.example",
                "b@x.example",
            ],
            strict=True,
        )
    )
    assert (result["created"], result["failed"]) == (2, 1)
    listed = (await client.get(f"{API}?sortBy=address", headers=actor.in_org())).json()["data"]
    assert [(r["address"], r["reason"]) for r in listed] == [
        ("ada@x.example", "manual"),
        ("b@x.example", "manual"),
        ("old@x.example", "hard_bounce"),
    ]
    # A suppressed address is never written to.
    refused = await send(client, actor, email(to="ADA@x.example"), key="after-import")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["reason"] == "suppressed"


async def test_import_goes_through_the_one_suppression_function(client, actor) -> None:
    calls: list[tuple[str, str]] = []
    real = inbound.suppress

    async def spy(session, organization_id, address, reason):  # type: ignore[no-untyped-def]
        calls.append((address, reason))
        await real(session, organization_id, address, reason)

    with mock.patch.object(inbound, "suppress", spy):
        await imported(client, actor, ["one@x.example", "Two <two@x.example>"])
    assert calls == [("one@x.example", "manual"), ("two@x.example", "manual")]


async def test_import_limits_and_body(client, actor) -> None:
    too_many = [f"u{n}@x.example" for n in range(1001)]
    for body in (
        {"addresses": too_many, "reason": "manual"},
        {"addresses": [], "reason": "manual"},
        {"addresses": ["a@x.example"], "reason": "complaint"},
        {"addresses": ["a@x.example"], "reason": "manual", "extra": 1},
        {"addresses": [1], "reason": "manual"},
    ):
        response = await client.post(API, json=body, headers=actor.in_org())
        assert response.status_code == 400, (body, response.text)
        assert response.json()["error"]["code"] == "validation_error"
    thousand = await imported(client, actor, [f"u{n}@x.example" for n in range(1000)])
    assert thousand["created"] == 1000 and thousand["failed"] == 0


async def test_only_admins_with_engage_write_import(client, actor, db) -> None:
    member = await make_user(db, actor.org, role="member")
    member_key = await make_key(db, member, scopes=["engage:read", "engage:write"])
    headers = {"Authorization": f"Bearer {member_key}", "X-Organization-Id": str(actor.org.id)}
    body = {"addresses": ["a@x.example"], "reason": "manual"}
    refused = await client.post(API, json=body, headers=headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["reason"] == "admin_required"
    reader = await make_actor(db, scopes=["engage:read"])
    no_scope = await client.post(API, json=body, headers=reader.in_org())
    assert no_scope.status_code == 403
    assert no_scope.json()["error"]["details"]["requiredScope"] == "engage:write"
    assert (await client.get(API, headers=actor.in_org())).json()["data"] == []


async def test_openapi_documents_the_import(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    operation = doc["paths"]["/api/v1/engage/suppressions"]["post"]
    assert operation["operationId"] == "bulkCreateEngageSuppressions"
    assert operation["x-scopes"] == ["engage:write"]
    assert operation["x-rate-limit-group"] == "engage"
    assert "207" in operation["responses"]


async def test_an_address_suppressed_meanwhile_keeps_its_first_reason(actor, db) -> None:
    """Two requests suppressing one address at once (an import beside an unsubscribe): the one
    that looked first and inserts second finds the row there. It neither fails nor replaces the
    first reason, and the transaction it is part of goes on."""
    await suppress(db, actor.org.id, "race@x.example", "unsubscribe")
    await db.flush()
    with mock.patch.object(inbound.repository, "is_suppressed", mock.AsyncMock(return_value=False)):
        await suppress(db, actor.org.id, "race@x.example", "manual")
    await suppress(db, actor.org.id, "later@x.example", "manual")  # the session still works
    await db.commit()
    rows = (
        await db.execute(
            select(EngageSuppression.email, EngageSuppression.reason).where(
                EngageSuppression.organization_id == actor.org.id
            )
        )
    ).all()
    assert sorted(tuple(r) for r in rows) == [
        ("later@x.example", "manual"),
        ("race@x.example", "unsubscribe"),
    ]
