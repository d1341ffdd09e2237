"""Webhook endpoints (contract §13): shape, secret shown once, validation, admins only,
tenancy, scopes and the rate-limit group."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import httpx

from salesplan.models.oauth import OAuthApp
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor, make_key, make_user
from tests.webhooks.conftest import API, make_endpoint

KEYS = {
    "id",
    "url",
    "description",
    "eventTypes",
    "enabled",
    "disabledReason",
    "payload",
    "createdAt",
    "updatedAt",
}


async def test_create_answers_the_endpoint_and_its_secret_once(client, actor, receiver) -> None:
    created = await make_endpoint(
        client, actor, receiver.url, description="CRM sync", eventTypes=["account.created"]
    )
    assert set(created) == KEYS | {"secret"}
    assert created["eventTypes"] == ["account.created"]
    assert created["enabled"] is True and created["disabledReason"] is None
    secret = created["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32

    got = await client.get(f"{API}/{created['id']}", headers=actor.headers)
    assert got.status_code == 200 and set(got.json()) == KEYS
    listed = await client.get(API, headers=actor.headers)
    assert listed.status_code == 200
    assert [e["id"] for e in listed.json()["data"]] == [created["id"]]
    assert "secret" not in listed.json()["data"][0]


async def test_patch_changes_what_was_sent_and_delete_is_permanent(client, actor, receiver) -> None:
    created = await make_endpoint(client, actor, receiver.url)
    resp = await client.patch(
        f"{API}/{created['id']}",
        json={"eventTypes": ["contact.*"], "enabled": False},
        headers=actor.headers,
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["eventTypes"] == ["contact.*"] and resp.json()["enabled"] is False
    assert resp.json()["url"] == receiver.url
    resp = await client.patch(f"{API}/{created['id']}", json={"url": None}, headers=actor.headers)
    assert_envelope(resp, 400, "validation_error")
    assert (await client.delete(f"{API}/{created['id']}", headers=actor.headers)).status_code == 204
    gone = await client.get(f"{API}/{created['id']}", headers=actor.headers)
    assert_envelope(gone, 404, "not_found")


async def test_rotate_secret_answers_a_new_secret(client, actor, receiver) -> None:
    created = await make_endpoint(client, actor, receiver.url)
    resp = await client.post(f"{API}/{created['id']}/rotate-secret", headers=actor.headers)
    assert resp.status_code == 200, resp.text
    assert resp.json()["secret"].startswith("whsec_")
    assert resp.json()["secret"] != created["secret"]


async def test_unknown_event_type_is_422(client, actor, receiver) -> None:
    resp = await client.post(
        API, json={"url": receiver.url, "eventTypes": ["account.exploded"]}, headers=actor.headers
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["unknown"] == ["account.exploded"]


async def test_private_destination_is_refused_at_save(client, actor) -> None:
    for url in ("https://10.1.2.3/hook", "https://169.254.169.254/latest", "https://127.0.0.1/x"):
        resp = await client.post(API, json={"url": url}, headers=actor.headers)
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["reason"] == "destination_not_allowed", url


async def test_plain_http_is_refused_unless_loopback_is_allowed(client, actor) -> None:
    resp = await client.post(API, json={"url": "http://example.com/hook"}, headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "invalid_url"
    resp = await client.post(API, json={"url": "ftp://example.com/"}, headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")


async def test_another_organizations_endpoint_is_404(client, actor, db, receiver) -> None:
    created = await make_endpoint(client, actor, receiver.url)
    other = await make_actor(db)
    for method, path in (
        ("GET", f"{API}/{created['id']}"),
        ("PATCH", f"{API}/{created['id']}"),
        ("DELETE", f"{API}/{created['id']}"),
        ("POST", f"{API}/{created['id']}/rotate-secret"),
        ("GET", f"{API}/{created['id']}/attempts"),
        ("POST", f"{API}/{created['id']}/replay"),
    ):
        body: Any = {"since": "2026-01-01T00:00:00Z"} if path.endswith("replay") else {}
        resp = await client.request(
            method, path, json=body if method != "GET" else None, headers=other.headers
        )
        assert_envelope(resp, 404, "not_found")
    listed = await client.get(API, headers=other.headers)
    assert listed.json()["data"] == []
    assert (await client.get(f"{API}/{uuid.uuid4()}", headers=actor.headers)).status_code == 404


async def test_members_are_refused(client, actor, db, receiver) -> None:
    member = await make_user(db, actor.org, role="member")
    key = await make_key(db, member)
    headers = {"Authorization": f"Bearer {key}"}
    for method, path in (("GET", API), ("POST", API)):
        resp = await client.request(
            method, path, json={"url": receiver.url} if method == "POST" else None, headers=headers
        )
        assert_envelope(resp, 403, "forbidden")
        assert resp.json()["error"]["details"]["reason"] == "admin_required"


async def test_scopes_are_webhooks_read_and_write(client, db, receiver) -> None:
    reader = await make_actor(db, scopes=["webhooks:read"])
    assert (await client.get(API, headers=reader.headers)).status_code == 200
    resp = await client.post(API, json={"url": receiver.url}, headers=reader.headers)
    assert_envelope(resp, 403, "forbidden")
    assert resp.json()["error"]["details"]["requiredScope"] == "webhooks:write"
    writer = await make_actor(db, scopes=["webhooks:write"])
    resp = await client.get(API, headers=writer.headers)
    assert resp.json()["error"]["details"]["requiredScope"] == "webhooks:read"


async def _app_token(client: Any, db: Any, owner: Any, org_id: uuid.UUID) -> str:
    from salesplan.oauth.apps import create_oauth_app

    app, secret = await create_oauth_app(
        db,
        owner_user_id=owner.id,
        name="Machine",
        scopes=["webhooks:read", "webhooks:write"],
        grant_types=["client_credentials"],
        organization_ids=[org_id],
    )
    await db.commit()
    assert isinstance(app, OAuthApp)
    resp = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=httpx.BasicAuth(app.client_id, secret),
    )
    assert resp.status_code == 200, resp.text
    return str(resp.json()["access_token"])


async def test_app_tokens_of_an_admin_may_and_of_a_member_may_not(client, actor, db) -> None:
    token = await _app_token(client, db, actor.user, actor.org.id)
    resp = await client.get(API, headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200, resp.text
    member = await make_user(db, actor.org, role="member")
    token = await _app_token(client, db, member, actor.org.id)
    resp = await client.get(API, headers={"Authorization": f"Bearer {token}"})
    assert_envelope(resp, 403, "forbidden")


async def test_meta_lists_the_scopes_and_the_group(client) -> None:
    meta = (await client.get("/api/v1/meta")).json()
    assert {"webhooks:read", "webhooks:write"} <= set(meta["scopes"])
    assert meta["rateLimiting"]["groups"]["webhooks"] == {"read": 60, "write": 30}


async def test_openapi_names_the_operations(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for name in (
        "listWebhookEndpoints",
        "createWebhookEndpoint",
        "getWebhookEndpoint",
        "updateWebhookEndpoint",
        "deleteWebhookEndpoint",
        "rotateWebhookEndpointSecret",
        "listWebhookAttempts",
        "replayWebhookEvents",
    ):
        assert ops[name]["x-rate-limit-group"] == "webhooks"
    assert ops["createWebhookEndpoint"]["x-scopes"] == ["webhooks:write"]
