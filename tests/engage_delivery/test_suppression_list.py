"""Contract §14 "Suppression list": listEngageSuppressions (engage:read, group engage, cursor
list of {address, reason, createdAt}, filter address) and
deleteEngageSuppression (engage:write, admins only, 204; another organization's or an unknown
address → 404). Addresses are the parsed ones (§12), stored so that a lookup is one equality."""

from __future__ import annotations

from urllib.parse import quote

from sqlalchemy import select

from salesplan.engage.delivery.inbound import suppress
from salesplan.engage.delivery.worker import run_delivery
from salesplan.models.crm import Contact
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send
from tests.engage_delivery.test_tracking_inbound import (
    complaint,
    delivered,
    dsn,
    post_inbound,
    secret_of,
)
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import make_actor

API = "/api/v1/engage/suppressions"


async def listed(client, actor, query: str = "") -> dict:
    response = await client.get(f"{API}{query}", headers=actor.in_org())
    assert response.status_code == 200, response.text
    return dict(response.json())


async def unsubscribed(app, client, actor, smtp, to: str, key: str) -> None:
    sent = await send(client, actor, email(to=to), key=key)
    assert sent.status_code == 202, sent.text
    await run_delivery(worker_context(app, smtp))
    url = smtp.received[-1]["List-Unsubscribe"].strip("<>").replace("http://testserver", "")
    assert (await client.post(url, content=b"List-Unsubscribe=One-Click")).status_code == 200


async def test_every_reason_is_listed_with_address_reason_and_created_at(
    app, client, actor, db, smtp
) -> None:
    secret = await secret_of(app, db, actor)
    await unsubscribed(app, client, actor, smtp, "Opt Out <OptOut@X.example>", "u")
    bounced, _ = await delivered(app, client, actor, smtp, to="gone@x.example")
    raw = dsn(bounced["messageId"], "failed", "5.1.1")
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202
    spam = (await send(client, actor, email(to="angry@x.example"), key="c")).json()["message"]
    await run_delivery(worker_context(app, smtp))
    raw = complaint(spam["messageId"])
    assert (await post_inbound(client, actor.org.id, raw, secret)).status_code == 202

    page = await listed(client, actor, "?sortBy=createdAt")
    rows = page["data"]
    assert [(r["address"], r["reason"]) for r in rows] == [
        ("optout@x.example", "unsubscribed"),
        ("gone@x.example", "hard_bounce"),
        ("angry@x.example", "complaint"),
    ]
    assert all(set(r) == {"address", "reason", "createdAt"} for r in rows)
    assert all(r["createdAt"].endswith("Z") for r in rows)
    assert page["pagination"]["totalCount"] == 3


async def test_the_list_pages_by_cursor_and_filters_by_parsed_address(client, actor, db) -> None:
    for n in range(5):
        await suppress(db, actor.org.id, f"p{n}@x.example", "manual")
    await db.commit()
    first = await listed(client, actor, "?limit=2")
    assert len(first["data"]) == 2
    assert first["pagination"]["hasNextPage"] is True
    seen = [r["address"] for r in first["data"]]
    cursor = first["pagination"]["nextCursor"]
    while cursor:
        page = await listed(client, actor, f"?limit=2&cursor={quote(cursor)}")
        seen += [r["address"] for r in page["data"]]
        cursor = page["pagination"].get("nextCursor")
    assert sorted(seen) == [f"p{n}@x.example" for n in range(5)]
    for spelling in ("p3@x.example", "P3 <P3@X.EXAMPLE>", '"p3@x.example"'):
        found = await listed(client, actor, f"?address={quote(spelling)}")
        assert [r["address"] for r in found["data"]] == ["p3@x.example"], spelling
    assert (await listed(client, actor, "?address=nobody%40x.example"))["data"] == []


async def test_list_needs_engage_read_and_shows_only_the_organizations_rows(
    client, actor, db
) -> None:
    other = await make_actor(db)
    await suppress(db, other.org.id, "theirs@x.example", "manual")
    await db.commit()
    assert (await listed(client, actor))["data"] == []
    no_scope = await make_actor(db, scopes=["engage:write", "engage:send"])
    response = await client.get(API, headers=no_scope.in_org())
    assert response.status_code == 403
    assert response.json()["error"]["details"]["requiredScope"] == "engage:read"


async def test_an_admin_lifts_a_suppression_and_the_address_is_written_to_again(
    app, client, actor, smtp
) -> None:
    await unsubscribed(app, client, actor, smtp, "ada@example.com", "first")
    assert (await send(client, actor, email(), key="refused")).status_code == 422
    path = f"{API}/{quote('Ada <ADA@example.com>')}"
    response = await client.delete(path, headers=actor.in_org())
    assert response.status_code == 204
    assert response.content == b""
    assert (await listed(client, actor))["data"] == []
    assert (await send(client, actor, email(), key="again")).status_code == 202
    again = await client.delete(path, headers=actor.in_org())
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"


async def test_only_admins_lift_and_others_rows_are_404(client, actor, db) -> None:
    await suppress(db, actor.org.id, "ada@example.com", "hard_bounce")
    other = await make_actor(db)
    await suppress(db, other.org.id, "grace@example.com", "complaint")
    await db.commit()
    # Another organization's address (and an unknown one) is a 404, never a 403.
    theirs = await client.delete(f"{API}/grace%40example.com", headers=actor.in_org())
    assert theirs.status_code == 404
    unknown = await client.delete(f"{API}/nobody%40example.com", headers=actor.in_org())
    assert unknown.status_code == 404
    assert [r["address"] for r in (await listed(client, other))["data"]] == ["grace@example.com"]

    from tests.fixtures.factories import make_key, make_user

    member = await make_user(db, actor.org, role="member")
    member_key = await make_key(db, member, scopes=["engage:read", "engage:write"])
    headers = {"Authorization": f"Bearer {member_key}", "X-Organization-Id": str(actor.org.id)}
    refused = await client.delete(f"{API}/ada%40example.com", headers=headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["reason"] == "admin_required"
    reader = await make_actor(db, scopes=["engage:read"])
    no_scope = await client.delete(f"{API}/x%40example.com", headers=reader.in_org())
    assert no_scope.status_code == 403
    assert no_scope.json()["error"]["details"]["requiredScope"] == "engage:write"
    assert [r["address"] for r in (await listed(client, actor))["data"]] == ["ada@example.com"]


async def test_openapi_names_both_operations_with_scope_and_group(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    listing = doc["paths"]["/api/v1/engage/suppressions"]["get"]
    lifting = doc["paths"]["/api/v1/engage/suppressions/{address}"]["delete"]
    assert listing["operationId"] == "listEngageSuppressions"
    assert lifting["operationId"] == "deleteEngageSuppression"
    assert listing["x-scopes"] == ["engage:read"]
    assert lifting["x-scopes"] == ["engage:write"]
    assert listing["x-rate-limit-group"] == lifting["x-rate-limit-group"] == "engage"
    item = doc["components"]["schemas"]["SuppressionOut"]
    assert set(item["properties"]) == {"address", "reason", "createdAt"}
    assert set(item["properties"]["reason"]["enum"]) == {
        "unsubscribed",
        "hard_bounce",
        "complaint",
        "manual",
    }
    assert "204" in lifting["responses"]


async def test_rows_carry_their_parsed_address_for_one_equality_lookup(client, actor, db) -> None:
    """The normalized columns are written with the row (ORM and API alike)."""
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email='"Ada L" <ADA@Example.com>')
    sent = await send(client, actor, email(to="Grace <GRACE@example.com>"))
    assert sent.status_code == 202
    await db.refresh(contact)
    assert contact.email_mailbox == "ada@example.com"
    stored = (await db.execute(select(EngageMessage.to_mailbox))).scalars().all()
    assert stored == ["grace@example.com"]
    contact.email = "Someone <Else@Example.com>"
    await db.commit()
    row = (
        await db.execute(
            select(Contact.email_mailbox)
            .where(Contact.id == contact.id)
            .execution_options(populate_existing=True)
        )
    ).scalar_one()
    assert row == "else@example.com"


async def _app_token(client, db, owner, org_id) -> str:
    import httpx

    from salesplan.oauth.apps import create_oauth_app

    app, secret = await create_oauth_app(
        db,
        owner_user_id=owner.id,
        name="Machine",
        scopes=["engage:read", "engage:write"],
        grant_types=["client_credentials"],
        organization_ids=[org_id],
    )
    await db.commit()
    resp = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=httpx.BasicAuth(app.client_id, secret),
    )
    assert resp.status_code == 200, resp.text
    return str(resp.json()["access_token"])


async def test_app_tokens_of_an_admin_lift_and_of_a_member_do_not(client, actor, db) -> None:
    """The same admins-only rule as webhook endpoints (organizations/admin.py): an app token counts as
    its owner's role."""
    from tests.fixtures.factories import make_user

    await suppress(db, actor.org.id, "ada@example.com", "manual")
    await suppress(db, actor.org.id, "bob@example.com", "manual")
    await db.commit()
    member = await make_user(db, actor.org, role="member")
    token = await _app_token(client, db, member, actor.org.id)
    refused = await client.delete(
        f"{API}/ada%40example.com", headers={"Authorization": f"Bearer {token}"}
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["reason"] == "admin_required"
    token = await _app_token(client, db, actor.user, actor.org.id)
    lifted = await client.delete(
        f"{API}/ada%40example.com", headers={"Authorization": f"Bearer {token}"}
    )
    assert lifted.status_code == 204, lifted.text
    assert [r["address"] for r in (await listed(client, actor))["data"]] == ["bob@example.com"]
