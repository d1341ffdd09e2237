"""Contract §13 (2026-11-27) "Catalog and tests": `GET /webhooks/event-types` lists every type
with a one-line description and its `data` schema (a `$ref` into the OpenAPI document), the
document's OpenAPI 3.1 `webhooks` section carries each event, `eventTypes` is an enum of the
types and `resource.*`; `POST …/{endpointId}/test` sends a signed `webhook.test`."""

from __future__ import annotations

import json
from typing import Any

from standardwebhooks.webhooks import Webhook

from salesplan.webhooks.catalog import CATALOG
from tests.fixtures.envelope import assert_envelope
from tests.webhooks.conftest import API, deliver_due, make_endpoint, worker_ctx

TYPES = "/api/v1/webhooks/event-types"
NEW = {
    "plan_task.deleted",
    "plan_milestone.created",
    "plan_milestone.updated",
    "plan_milestone.deleted",
    "plan_goal.created",
    "plan_goal.updated",
    "plan_goal.deleted",
    "engage_suppression.created",
    "engage_suppression.deleted",
    "engage_campaign.completed",
}


def _resolve(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref.removeprefix("#").removeprefix("/").split("/"):
        node = node[part]
    return node


async def test_event_types_list_every_type_with_its_schema(client, actor) -> None:
    resp = await client.get(TYPES, headers=actor.headers)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    types = {t["type"]: t for t in body["data"]}
    assert len(types) == len(body["data"]) == len(CATALOG)
    assert body["pagination"]["hasNextPage"] is False
    assert set(types) >= NEW and "account.created" in types and "webhook.test" in types
    document = (await client.get("/api/v1/openapi.json")).json()
    for name, entry in types.items():
        assert set(entry) == {"type", "description", "schema"}
        assert entry["description"] and "\n" not in entry["description"]
        ref = entry["schema"]["$ref"]
        assert ref.startswith("/api/v1/openapi.json#/components/schemas/"), ref
        assert isinstance(_resolve(document, ref.split("#", 1)[1]), dict), name
    assert types["plan.created"]["schema"]["$ref"].endswith("/Plan")
    assert types["plan_goal.deleted"]["schema"]["$ref"].endswith("/PlanGoal")


async def test_event_types_need_the_webhooks_read_scope(client, actor, db) -> None:
    from tests.fixtures.factories import make_key

    key = await make_key(db, actor.user, scopes=["accounts:read"])
    resp = await client.get(TYPES, headers=actor.in_org() | {"Authorization": f"Bearer {key}"})
    assert_envelope(resp, 403, "forbidden")


async def test_the_openapi_document_carries_every_event(client) -> None:
    document = (await client.get("/api/v1/openapi.json")).json()
    section = document["webhooks"]
    assert set(section) == {e.name for e in CATALOG}
    for name, item in section.items():
        schema = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert schema["required"] == ["type", "timestamp", "data"]
        assert schema["properties"]["type"]["const"] == name
        assert isinstance(_resolve(document, schema["properties"]["data"]["$ref"]), dict)
        headers = {p["name"] for p in item["post"]["parameters"]}
        assert headers == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    components = document["components"]["schemas"]
    for name in ("EndpointIn", "EndpointOut"):
        enum = components[name]["properties"]["eventTypes"]["items"]["enum"]
        assert set(enum) >= NEW and "plan_goal.*" in enum and "account.*" in enum


async def test_a_test_event_is_signed_and_listed_like_any_other(
    app, client, actor, receiver
) -> None:
    endpoint = await make_endpoint(client, actor, receiver.url, eventTypes=["account.created"])
    resp = await client.post(f"{API}/{endpoint['id']}/test", headers=actor.headers)
    assert resp.status_code == 202, resp.text
    event_id = resp.json()["eventId"]
    assert await deliver_due(worker_ctx(app)) == 1
    [got] = receiver.received
    payload = Webhook(endpoint["secret"]).verify(got.body, got.headers)
    assert payload["type"] == "webhook.test"
    assert payload["data"]["endpointId"] == endpoint["id"]
    assert got.headers["webhook-id"] == event_id
    attempts = await client.get(f"{API}/{endpoint['id']}/attempts", headers=actor.headers)
    [row] = attempts.json()["data"]
    assert row["eventId"] == event_id and row["type"] == "webhook.test"
    assert row["status"] == "delivered" and row["attempts"] == 1


async def test_a_test_event_for_a_disabled_or_unknown_endpoint(client, actor, receiver) -> None:
    import uuid

    endpoint = await make_endpoint(client, actor, receiver.url, enabled=False)
    resp = await client.post(f"{API}/{endpoint['id']}/test", headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "endpoint_disabled"
    resp = await client.post(f"{API}/{uuid.uuid4()}/test", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")
    assert json.loads(resp.text)["error"]["code"] == "not_found"
