"""Relationship maps: one per entity, the spec's buyerMap shape, contact placements."""

from __future__ import annotations

import uuid

from salesplan.auth.principal import Principal, RequestContext
from salesplan.relationship_maps.schemas import MapContactUpsert
from salesplan.relationship_maps.service import upsert_contact_at_once
from tests.fixtures.crm import make_account, make_buying_group, make_contact, make_opportunity
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor

MAP_KEYS = {
    "id",
    "entityId",
    "entityType",
    "map",
    "createdAt",
    "updatedAt",
    "orientation",
    "mapUrl",
    "contacts",
    "createdById",
    "updatedById",
}
PLACEMENT_KEYS = {
    "contactId",
    "supportStatus",
    "decisionStatus",
    "contactStatus",
    "functionalRole",
    "executiveId",
    "contact",
}


async def new_map(client, actor, entity_type, entity_id, **body):  # type: ignore[no-untyped-def]
    return await client.post(
        "/api/v1/relationship-maps",
        json={"entityType": entity_type, "entityId": str(entity_id), **body},
        headers=actor.headers,
    )


async def test_create_map_answers_the_buyer_map_shape(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    resp = await new_map(client, actor, "Account", account.id)
    assert resp.status_code == 201
    body = resp.json()
    assert set(body) == {"buyerMap"}
    buyer_map = body["buyerMap"]
    assert set(buyer_map) == MAP_KEYS
    assert buyer_map["entityType"] == "Account"
    assert buyer_map["entityId"] == str(account.id)
    assert buyer_map["map"] == {"nodes": [], "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}
    assert buyer_map["orientation"] == "vertical"
    assert buyer_map["mapUrl"] == f"http://testserver/maps/{buyer_map['id']}"
    assert buyer_map["contacts"] == []
    assert buyer_map["createdById"] == str(actor.user.id)
    assert buyer_map["updatedById"] == str(actor.user.id)
    got = await client.get(f"/api/v1/relationship-maps/{buyer_map['id']}", headers=actor.headers)
    assert got.json() == body


async def test_maps_of_buying_groups_and_opportunities(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    group = await make_buying_group(db, account)
    opp = await make_opportunity(db, account)
    assert (await new_map(client, actor, "BuyingGroup", group.id)).status_code == 201
    assert (await new_map(client, actor, "Opportunity", opp.id)).status_code == 201
    listed = await client.get(
        "/api/v1/relationship-maps", params={"entityType": "Opportunity"}, headers=actor.headers
    )
    assert [m["entityId"] for m in listed.json()["data"]] == [str(opp.id)]
    listed = await client.get(
        "/api/v1/relationship-maps", params={"entityId": str(group.id)}, headers=actor.headers
    )
    assert [m["entityType"] for m in listed.json()["data"]] == ["BuyingGroup"]


async def test_a_second_map_for_one_entity_is_409(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    assert (await new_map(client, actor, "Account", account.id)).status_code == 201
    assert_envelope(await new_map(client, actor, "Account", account.id), 409, "conflict")


async def test_map_of_a_missing_entity_is_422_and_bad_type_400(client, actor) -> None:
    resp = await new_map(client, actor, "Account", uuid.uuid4())
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "entityId"
    assert_envelope(await new_map(client, actor, "Plan", uuid.uuid4()), 400, "validation_error")


async def test_upsert_places_a_contact_with_one_node(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email="ada@example.com")
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    url = f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}"
    resp = await client.patch(url, json={"supportStatus": "champion"}, headers=actor.headers)
    assert resp.status_code == 200
    placed = resp.json()["buyerMap"]["contacts"]
    assert len(placed) == 1
    assert set(placed[0]) == PLACEMENT_KEYS
    assert placed[0] == {
        "contactId": str(contact.id),
        "supportStatus": "champion",
        "decisionStatus": None,
        "contactStatus": None,
        "functionalRole": None,
        "executiveId": None,
        "contact": {"fullName": "Ada Lovelace", "email": "ada@example.com"},
    }
    resp = await client.patch(url, json={"functionalRole": "CTO"}, headers=actor.headers)
    placed = resp.json()["buyerMap"]["contacts"]
    assert placed[0]["supportStatus"] == "champion"
    assert placed[0]["functionalRole"] == "CTO"
    nodes = resp.json()["buyerMap"]["map"]["nodes"]
    contact_nodes = [n for n in nodes if n["id"] == str(contact.id)]
    assert len(contact_nodes) == 1
    assert contact_nodes[0]["type"] == "contact"


async def test_upsert_validates_body_contact_and_buying_group(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    other, other_group = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    stranger = await make_contact(db, other)
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    base = f"/api/v1/relationship-maps/{buyer_map['id']}/contacts"
    for body in ({"supportStatus": ""}, {"supportStatus": "x" * 101}, {"color": "red"}):
        resp = await client.patch(f"{base}/{contact.id}", json=body, headers=actor.headers)
        assert_envelope(resp, 400, "validation_error")
    resp = await client.patch(f"{base}/{uuid.uuid4()}", json={}, headers=actor.headers)
    assert_envelope(resp, 404, "not_found")
    resp = await client.patch(f"{base}/{stranger.id}", json={}, headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")
    resp = await client.patch(
        f"{base}/{contact.id}", json={"buyingGroupId": str(other_group.id)}, headers=actor.headers
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "buyingGroupId"
    resp = await client.patch(
        f"/api/v1/relationship-maps/{uuid.uuid4()}/contacts/{contact.id}",
        json={},
        headers=actor.headers,
    )
    assert_envelope(resp, 404, "not_found")


async def test_upsert_with_buying_group_adds_the_member(client, actor, db) -> None:
    account, default = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    resp = await client.patch(
        f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}",
        json={"buyingGroupId": str(default.id)},
        headers=actor.headers,
    )
    assert resp.status_code == 200
    group = await client.get(f"/api/v1/buying-groups/{default.id}", headers=actor.headers)
    assert group.json()["memberContactIds"] == [str(contact.id)]


async def test_map_of_a_buying_group_accepts_contacts_of_its_account(client, actor, db) -> None:
    account, default = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    buyer_map = (await new_map(client, actor, "BuyingGroup", default.id)).json()["buyerMap"]
    resp = await client.patch(
        f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}",
        json={},
        headers=actor.headers,
    )
    assert resp.status_code == 200
    assert [c["contactId"] for c in resp.json()["buyerMap"]["contacts"]] == [str(contact.id)]


async def test_removing_a_placement_drops_its_node_and_edges(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    a = await make_contact(db, account)
    b = await make_contact(db, account, first="Bo")
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    base = f"/api/v1/relationship-maps/{buyer_map['id']}"
    await client.patch(f"{base}/contacts/{a.id}", json={}, headers=actor.headers)
    current = (await client.patch(f"{base}/contacts/{b.id}", json={}, headers=actor.headers)).json()
    graph = current["buyerMap"]["map"]
    graph["nodes"].append({"id": "note-1", "type": "note"})
    graph["edges"] = [
        {"id": "e1", "source": str(a.id), "target": str(b.id)},
        {"id": "e2", "source": str(b.id), "target": "note-1"},
    ]
    resp = await client.patch(
        base, json={"map": graph, "orientation": "horizontal"}, headers=actor.headers
    )
    assert resp.status_code == 200
    assert resp.json()["buyerMap"]["orientation"] == "horizontal"
    assert len(resp.json()["buyerMap"]["map"]["edges"]) == 2
    removed = await client.delete(f"{base}/contacts/{a.id}", headers=actor.headers)
    assert removed.status_code == 204
    after = (await client.get(base, headers=actor.headers)).json()["buyerMap"]
    assert [c["contactId"] for c in after["contacts"]] == [str(b.id)]
    assert sorted(n["id"] for n in after["map"]["nodes"]) == sorted([str(b.id), "note-1"])
    assert [e["id"] for e in after["map"]["edges"]] == ["e2"]
    again = await client.delete(f"{base}/contacts/{a.id}", headers=actor.headers)
    assert_envelope(again, 404, "not_found")


async def test_update_map_validates_orientation_and_map(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    url = f"/api/v1/relationship-maps/{buyer_map['id']}"
    for body in ({"orientation": "diagonal"}, {"map": {"nodes": "x"}}, {"other": 1}):
        assert_envelope(
            await client.patch(url, json=body, headers=actor.headers), 400, "validation_error"
        )


async def test_another_organizations_map_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    account, _ = await make_account(db, other.org.id)
    buyer_map = (await new_map(client, other, "Account", account.id)).json()["buyerMap"]
    resp = await client.get(f"/api/v1/relationship-maps/{buyer_map['id']}", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")


async def test_map_scopes_and_group(client, db) -> None:
    reader = await make_actor(db, scopes=["relationship_maps:read"])
    resp = await client.post(
        "/api/v1/relationship-maps",
        json={"entityType": "Account", "entityId": str(uuid.uuid4())},
        headers=reader.headers,
    )
    assert_envelope(resp, 403, "forbidden")
    assert resp.json()["error"]["details"]["requiredScope"] == "relationship_maps:write"
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for op_id, scope in {
        "listRelationshipMaps": "relationship_maps:read",
        "createRelationshipMap": "relationship_maps:write",
        "getRelationshipMap": "relationship_maps:read",
        "updateRelationshipMap": "relationship_maps:write",
        "upsertRelationshipMapContact": "relationship_maps:write",
        "removeRelationshipMapContact": "relationship_maps:write",
    }.items():
        assert ops[op_id]["x-scopes"] == [scope]
        assert ops[op_id]["x-rate-limit-group"] == "relationship_maps"


# --- upsertRelationshipMapContact's write path (Core on the driver, one transaction) ----------


async def test_a_refused_upsert_writes_nothing(client, actor, db) -> None:
    """The map is touched (and locked) first: every refusal after it rolls the touch back with
    the rest, and a buying group's membership is not kept when the placement is refused."""
    account, group = await make_account(db, actor.org.id)
    other, other_group = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    stranger = await make_contact(db, other)
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    base = f"/api/v1/relationship-maps/{buyer_map['id']}"
    before = (await client.get(base, headers=actor.headers)).json()
    refusals = [
        (f"{base}/contacts/{uuid.uuid4()}", {"supportStatus": "champion"}, 404),
        (f"{base}/contacts/{stranger.id}", {"buyingGroupId": str(other_group.id)}, 422),
        (f"{base}/contacts/{contact.id}", {"buyingGroupId": str(other_group.id)}, 422),
        (f"{base}/contacts/{contact.id}", {"buyingGroupId": str(uuid.uuid4())}, 422),
    ]
    for url, body, status in refusals:
        resp = await client.patch(url, json=body, headers=actor.headers)
        assert resp.status_code == status, (body, resp.text)
        assert (await client.get(base, headers=actor.headers)).json() == before
    for g in (group, other_group):
        members = await client.get(f"/api/v1/buying-groups/{g.id}", headers=actor.headers)
        assert members.json()["memberContactIds"] == []


async def test_an_upsert_changes_only_what_was_sent_and_answers_what_a_read_answers(
    client, actor, db
) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    graph = {
        "nodes": [{"id": "note", "type": "note", "position": {"x": 5, "y": 7}, "data": {}}],
        "edges": [],
        "viewport": {"x": 1, "y": 2, "zoom": 0.5},
    }
    created = await new_map(client, actor, "Account", account.id, map=graph)
    buyer_map = created.json()["buyerMap"]
    url = f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}"
    first = await client.patch(
        url, json={"supportStatus": "champion", "executiveId": "E1"}, headers=actor.headers
    )
    assert first.status_code == 200, first.text
    nodes = first.json()["buyerMap"]["map"]["nodes"]
    assert [n["id"] for n in nodes] == ["note", str(contact.id)]
    assert first.json()["buyerMap"]["map"]["viewport"] == graph["viewport"]
    second = await client.patch(
        url, json={"executiveId": None, "decisionStatus": "approver"}, headers=actor.headers
    )
    out = second.json()["buyerMap"]
    assert out["map"] == first.json()["buyerMap"]["map"]  # the node is there: graph unchanged
    assert out["updatedAt"] > first.json()["buyerMap"]["updatedAt"]
    assert out["updatedById"] == str(actor.user.id)
    (placed,) = out["contacts"]
    assert (placed["supportStatus"], placed["decisionStatus"], placed["executiveId"]) == (
        "champion",
        "approver",
        None,
    )
    read = await client.get(f"/api/v1/relationship-maps/{buyer_map['id']}", headers=actor.headers)
    assert read.json() == second.json()


def _contact_node(contact_id, y=0):  # type: ignore[no-untyped-def]
    return {
        "id": str(contact_id),
        "type": "contact",
        "position": {"x": 0, "y": y},
        "data": {"contactId": str(contact_id)},
    }


async def _map_with_nodes(client, actor, account_id, nodes) -> str:  # type: ignore[no-untyped-def]
    """A map of the account whose graph has these nodes; its path."""
    graph = {"nodes": nodes, "edges": [], "viewport": {"x": 0, "y": 0, "zoom": 1}}
    created = await new_map(client, actor, "Account", account_id, map=graph)
    assert created.status_code == 201, created.text
    return f"/api/v1/relationship-maps/{created.json()['buyerMap']['id']}"


async def test_a_contact_already_in_the_graph_is_placed_without_a_second_node(
    client, actor, db
) -> None:
    """The graph holds the contact's node before the contact is placed: the placement is
    written, the graph stays exactly as it was (PostgreSQL: the one-statement write)."""
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, email="ada@example.com")
    graph = {
        "nodes": [{"id": "note", "type": "note"}, _contact_node(contact.id, 40)],
        "edges": [{"id": "e1", "source": "note", "target": str(contact.id)}],
        "viewport": {"x": 3, "y": 4, "zoom": 2},
    }
    buyer_map = (await new_map(client, actor, "Account", account.id, map=graph)).json()
    base = f"/api/v1/relationship-maps/{buyer_map['buyerMap']['id']}"
    resp = await client.patch(
        f"{base}/contacts/{contact.id}", json={"contactStatus": "met"}, headers=actor.headers
    )
    assert resp.status_code == 200, resp.text
    out = resp.json()["buyerMap"]
    assert out["map"] == graph
    assert [(p["contactId"], p["contactStatus"]) for p in out["contacts"]] == [
        (str(contact.id), "met")
    ]
    assert out["contacts"][0]["contact"] == {"fullName": "Ada Lovelace", "email": "ada@example.com"}
    assert out["updatedAt"] > buyer_map["buyerMap"]["updatedAt"]
    assert (await client.get(base, headers=actor.headers)).json() == resp.json()


async def test_a_graph_with_duplicate_contact_nodes_is_mended_by_an_upsert(
    client, actor, db
) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    base = await _map_with_nodes(
        client, actor, account.id, [_contact_node(contact.id), _contact_node(contact.id, 160)]
    )
    for _ in range(2):
        resp = await client.patch(f"{base}/contacts/{contact.id}", json={}, headers=actor.headers)
        assert resp.status_code == 200, resp.text
        assert resp.json()["buyerMap"]["map"]["nodes"] == [_contact_node(contact.id)]
        assert len(resp.json()["buyerMap"]["contacts"]) == 1
    assert (await client.get(base, headers=actor.headers)).json() == resp.json()


async def test_a_refused_upsert_of_a_contact_in_the_graph_writes_nothing(client, actor, db) -> None:
    """Contacts whose nodes the graph holds, refused: missing, of another account, of
    another organization. Each answers its error and leaves the map as it was."""
    account, _ = await make_account(db, actor.org.id)
    other_account, _ = await make_account(db, actor.org.id)
    other = await make_actor(db)
    foreign_account, _ = await make_account(db, other.org.id)
    contact = await make_contact(db, account)
    stranger = await make_contact(db, other_account)
    foreigner = await make_contact(db, foreign_account)
    missing = uuid.uuid4()
    nodes = [_contact_node(c) for c in (contact.id, stranger.id, foreigner.id, missing)]
    base = await _map_with_nodes(client, actor, account.id, nodes)
    placed = await client.patch(
        f"{base}/contacts/{contact.id}", json={"supportStatus": "a"}, headers=actor.headers
    )
    assert placed.status_code == 200, placed.text
    before = (await client.get(base, headers=actor.headers)).json()
    for contact_id, status, code in (
        (missing, 404, "not_found"),
        (foreigner.id, 404, "not_found"),
        (stranger.id, 422, "unprocessable"),
    ):
        resp = await client.patch(
            f"{base}/contacts/{contact_id}", json={"supportStatus": "b"}, headers=actor.headers
        )
        assert_envelope(resp, status, code)
        assert (await client.get(base, headers=actor.headers)).json() == before
    # Another organization's map, for a contact placed on it: 404, and nothing written.
    resp = await client.patch(
        f"{base}/contacts/{contact.id}", json={"supportStatus": "c"}, headers=other.headers
    )
    assert_envelope(resp, 404, "not_found")
    assert (await client.get(base, headers=actor.headers)).json() == before


async def test_the_one_statement_upsert_applies_to_a_placed_contact_on_postgresql(
    app, client, actor, db, is_postgres
) -> None:
    """The hot write's own way (kit.driver, no transaction) is the one taken for a contact
    already placed; on SQLite it does not apply and the transaction's way answers."""

    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    buyer_map = (await new_map(client, actor, "Account", account.id)).json()["buyerMap"]
    url = f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}"
    assert (await client.patch(url, json={}, headers=actor.headers)).status_code == 200
    ctx = RequestContext(
        Principal(
            token_id=uuid.uuid4(),
            token_kind="api_key",
            scopes=frozenset({"write"}),
            organization_ids=frozenset({actor.org.id}),
            user_id=actor.user.id,
        ),
        actor.org.id,
    )
    body = MapContactUpsert.model_validate({"functionalRole": "CFO"})
    async with app.state.engine.connect() as conn:  # type: ignore[attr-defined]
        out = await upsert_contact_at_once(
            conn, ctx, uuid.UUID(buyer_map["id"]), contact.id, body, ""
        )
    if not is_postgres:
        assert out is None
        return
    assert out is not None
    assert [p.functional_role for p in out.contacts] == ["CFO"]
    read = (await client.get(url.rsplit("/contacts/", 1)[0], headers=actor.headers)).json()
    assert read["buyerMap"]["contacts"][0]["functionalRole"] == "CFO"
    assert read["buyerMap"]["updatedAt"] == out.model_dump(by_alias=True, mode="json")["updatedAt"]
