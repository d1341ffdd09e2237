"""The relationship-map page behind `mapUrl`: GET /maps/{buyerMapId}, server-rendered SVG."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.identity import Membership
from salesplan.web.map_layout import PAD, Person, layout, support_tone
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_actor
from tests.oauth.flow import PASSWORD, sign_in
from tests.web.test_browser import browser, origin, shots  # noqa: F401 - shared fixtures

CARD = re.compile(r'<g class="map-card tone-([a-z]+)" transform="[^"]*" data-contact-id="([^"]+)"')
EDGE = re.compile(r'<g class="map-edge" data-source="([^"]+)" data-target="([^"]+)"')


async def make_map(
    client: httpx.AsyncClient,
    db: AsyncSession,
    actor: Actor,
    people: list[tuple[str, str | None]],
    *,
    account_name: str = "Northwind Traders",
    edges: list[tuple[int, int]] = (),  # type: ignore[assignment]
    **map_fields: Any,
) -> tuple[dict[str, Any], list[str]]:
    """A map on a new account with `people` (first name, support status) placed, and `edges`
    between them by index."""
    account, _ = await make_account(db, actor.org.id, account_name)
    created = await client.post(
        "/api/v1/relationship-maps",
        json={"entityType": "Account", "entityId": str(account.id), **map_fields},
        headers=actor.headers,
    )
    assert created.status_code == 201, created.text
    buyer_map = created.json()["buyerMap"]
    ids = []
    for first, support in people:
        contact = await make_contact(db, account, first, "Tester", title="VP Sales")
        body = {"functionalRole": "Economic buyer", "decisionStatus": "Decision maker"}
        if support is not None:
            body["supportStatus"] = support
        placed = await client.patch(
            f"/api/v1/relationship-maps/{buyer_map['id']}/contacts/{contact.id}",
            json=body,
            headers=actor.headers,
        )
        assert placed.status_code == 200, placed.text
        buyer_map = placed.json()["buyerMap"]
        ids.append(str(contact.id))
    if edges:
        graph = buyer_map["map"] | {
            "edges": [
                {"id": f"e{s}{t}", "source": ids[s], "target": ids[t], "label": "reports to"}
                for s, t in edges
            ]
        }
        patched = await client.patch(
            f"/api/v1/relationship-maps/{buyer_map['id']}",
            json={"map": graph},
            headers=actor.headers,
        )
        assert patched.status_code == 200, patched.text
        buyer_map = patched.json()["buyerMap"]
    return buyer_map, ids


async def page_of(client: httpx.AsyncClient, actor: Actor, map_id: str) -> httpx.Response:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    return await client.get(f"/maps/{map_id}")


# ------------------------------------------------------------------ access


async def test_signed_out_visitors_are_sent_to_sign_in_and_back(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, _ = await make_map(client, db, actor, [("Ada", "champion")])
    response = await client.get(f"/maps/{buyer_map['id']}")
    assert response.status_code == 303
    assert response.headers["location"] == f"/login?next=/maps/{buyer_map['id']}"


async def test_map_url_points_at_the_page(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, _ = await make_map(client, db, actor, [("Ada", "champion")])
    assert buyer_map["mapUrl"] == f"http://testserver/maps/{buyer_map['id']}"
    page = await page_of(client, actor, buyer_map["id"])
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")


async def test_another_organizations_map_is_not_found(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    other = await make_actor(db)
    theirs, _ = await make_map(client, db, other, [("Eve", "blocker")], account_name="Secret Co")
    page = await page_of(client, actor, theirs["id"])
    assert page.status_code == 404
    assert "Map not found" in page.text
    assert "Secret Co" not in page.text and "Eve" not in page.text


@pytest.mark.parametrize(
    "map_id", [str(uuid.uuid4()), "not-a-uuid", "1"], ids=["unknown-uuid", "not-a-uuid", "1"]
)
async def test_an_unknown_or_malformed_id_is_not_found(
    client: httpx.AsyncClient, actor: Actor, map_id: str
) -> None:
    page = await page_of(client, actor, map_id)
    assert page.status_code == 404
    assert "Map not found" in page.text


async def test_a_map_of_each_organization_the_user_belongs_to_is_shown(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    other = await make_actor(db)
    theirs, _ = await make_map(client, db, other, [("Eve", "blocker")], account_name="Partner Co")
    db.add(Membership(organization_id=other.org.id, user_id=actor.user.id, role="member"))
    await db.commit()
    page = await page_of(client, actor, theirs["id"])
    assert page.status_code == 200
    assert "Partner Co" in page.text


async def test_the_page_carries_the_security_headers(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, _ = await make_map(client, db, actor, [("Ada", "champion")])
    page = await page_of(client, actor, buyer_map["id"])
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    assert "<script" not in page.text


# ------------------------------------------------------------------ drawing


async def test_each_placed_contact_is_a_card_coloured_by_support_status(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    statuses = {
        "Ada": "champion",
        "Bo": "Supporter",
        "Cy": "neutral",
        "Di": "detractor",
        "Ed": "Blocker",
        "Fi": None,
        "Gus": "something else",
    }
    buyer_map, ids = await make_map(client, db, actor, list(statuses.items()))
    page = await page_of(client, actor, buyer_map["id"])
    assert page.status_code == 200
    cards = {contact_id: tone for tone, contact_id in CARD.findall(page.text)}
    assert len(CARD.findall(page.text)) == len(ids)
    assert [cards[i] for i in ids] == [
        "champion",
        "supporter",
        "neutral",
        "detractor",
        "blocker",
        "unknown",
        "neutral",
    ]
    assert '<svg class="map-svg"' in page.text
    for tone in ("champion", "supporter", "neutral", "detractor", "blocker", "unknown"):
        assert f'<li class="tone-{tone}">' in page.text  # the legend
    assert "Ada Tester" in page.text and "VP Sales" in page.text and "Economic buyer" in page.text


async def test_edges_are_drawn_between_the_cards(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, ids = await make_map(
        client,
        db,
        actor,
        [("Ada", "champion"), ("Bo", "blocker"), ("Cy", None)],
        edges=[(0, 1), (0, 2)],
    )
    page = await page_of(client, actor, buyer_map["id"])
    assert EDGE.findall(page.text) == [(ids[0], ids[1]), (ids[0], ids[2])]
    assert page.text.count('class="edge-line"') == 2
    assert "reports to" in page.text


async def test_edges_to_nodes_that_are_not_drawn_are_left_out(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, ids = await make_map(client, db, actor, [("Ada", "champion")])
    graph = buyer_map["map"] | {"edges": [{"id": "x", "source": ids[0], "target": "ghost"}]}
    await client.patch(
        f"/api/v1/relationship-maps/{buyer_map['id']}", json={"map": graph}, headers=actor.headers
    )
    page = await page_of(client, actor, buyer_map["id"])
    assert EDGE.findall(page.text) == []


async def test_stored_node_positions_are_kept(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, ids = await make_map(client, db, actor, [("Ada", "champion"), ("Bo", "neutral")])
    graph = buyer_map["map"] | {
        "nodes": [
            {"id": ids[0], "type": "contact", "position": {"x": 100, "y": 50}},
            {"id": ids[1], "type": "contact", "position": {"x": 500, "y": 350}},
        ]
    }
    await client.patch(
        f"/api/v1/relationship-maps/{buyer_map['id']}", json={"map": graph}, headers=actor.headers
    )
    page = await page_of(client, actor, buyer_map["id"])
    assert f'transform="translate({PAD}.0,{PAD}.0)" data-contact-id="{ids[0]}"' in page.text
    assert f'transform="translate({PAD + 400}.0,{PAD + 300}.0)" data-contact-id="{ids[1]}"' in (
        page.text
    )


async def test_user_text_is_escaped(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, _ = await make_map(
        client,
        db,
        actor,
        [("<script>", '"><img src=x onerror=alert(1)>'), ("Bo", None)],
        account_name="<b>Evil & Co</b>",
        edges=[(0, 1)],
    )
    graph = buyer_map["map"]
    graph["edges"][0]["label"] = "</text><script>alert(2)</script>"
    await client.patch(
        f"/api/v1/relationship-maps/{buyer_map['id']}", json={"map": graph}, headers=actor.headers
    )
    page = await page_of(client, actor, buyer_map["id"])
    assert page.status_code == 200
    assert "<script>" not in page.text and "<img" not in page.text and "<b>Evil" not in page.text
    assert "&lt;script&gt; Tester" in page.text
    assert "&lt;b&gt;Evil &amp; Co&lt;/b&gt;" in page.text
    assert "&lt;/text&gt;&lt;script&gt;" in page.text
    assert len(CARD.findall(page.text)) == 2


async def test_an_empty_map_says_how_to_place_contacts(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, _ = await make_map(client, db, actor, [])
    page = await page_of(client, actor, buyer_map["id"])
    assert page.status_code == 200
    assert "No contacts on this map yet." in page.text
    assert CARD.findall(page.text) == []


# ------------------------------------------------------------------ layout rules


def _person(contact_id: str, support: str | None = None) -> Person:
    return Person(contact_id, contact_id, None, None, support, None, None, None)


@pytest.mark.parametrize(
    ("status", "tone"),
    [
        ("Champion", "champion"),
        ("executive sponsor", "champion"),
        ("strong_supporter", "supporter"),
        ("NEUTRAL", "neutral"),
        ("skeptical", "detractor"),
        ("blocker", "blocker"),
        ("", "unknown"),
        (None, "unknown"),
        ("Unknown", "unknown"),
        ("42", "neutral"),
    ],
)
def test_support_statuses_map_to_a_tone(status: str | None, tone: str) -> None:
    assert support_tone(status) == tone


def test_unarranged_nodes_are_tiered_along_the_edges() -> None:
    people = [_person(i) for i in ("a", "b", "c")]
    graph = {"nodes": [], "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]}
    vertical = {c.node_id: (c.x, c.y) for c in layout(graph, people, "vertical").cards}
    assert vertical["a"][1] < vertical["b"][1] < vertical["c"][1]
    assert vertical["a"][0] == vertical["b"][0] == vertical["c"][0]
    horizontal = {c.node_id: (c.x, c.y) for c in layout(graph, people, "horizontal").cards}
    assert horizontal["a"][0] < horizontal["b"][0] < horizontal["c"][0]
    assert horizontal["a"][1] == horizontal["b"][1] == horizontal["c"][1]


def test_a_cycle_of_edges_still_lays_out_every_card() -> None:
    people = [_person(i) for i in ("a", "b")]
    graph = {"edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}]}
    drawing = layout(graph, people, "vertical")
    assert len(drawing.cards) == 2 and len(drawing.links) == 2
    assert len({(c.x, c.y) for c in drawing.cards}) == 2


# ------------------------------------------------------------------ in a real browser


async def test_the_map_page_in_a_real_browser_shows_the_cards(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    client: httpx.AsyncClient,
    db: AsyncSession,
    actor: Actor,
) -> None:
    buyer_map, ids = await make_map(
        client,
        db,
        actor,
        [("Dana", "champion"), ("Marcus", "blocker"), ("Priya", "supporter"), ("Wei", None)],
        edges=[(0, 1), (0, 2), (2, 3)],
    )
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await page.goto(f"{origin}/maps/{buyer_map['id']}")
    await page.get_by_label("E-mail").fill(actor.user.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Northwind Traders").wait_for()
    assert page.url == f"{origin}/maps/{buyer_map['id']}"
    cards = page.locator("svg.map-svg g.map-card")
    assert await cards.count() == len(ids)
    for contact_id in ids:
        card = page.locator(f'g.map-card[data-contact-id="{contact_id}"]')
        assert await card.is_visible()
        box = await card.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 60
    assert await page.locator("g.map-card.tone-blocker", has_text="Marcus Tester").is_visible()
    assert await page.locator("g.map-edge").count() == 3
    await page.screenshot(path=str(shots / "relationship-map.png"), full_page=True)


# ------------------------------------------------------------------ issue 29: executives, layout


async def place(
    client: httpx.AsyncClient, actor: Actor, map_id: str, contact_id: str, **body: str
) -> dict[str, Any]:
    placed = await client.patch(
        f"/api/v1/relationship-maps/{map_id}/contacts/{contact_id}",
        json=body,
        headers=actor.headers,
    )
    assert placed.status_code == 200, placed.text
    return placed.json()["buyerMap"]  # type: ignore[no-any-return]


async def test_an_executive_id_draws_a_connection_from_the_executive(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, ids = await make_map(
        client, db, actor, [("Ada", "champion"), ("Bo", "neutral"), ("Cy", None), ("Di", None)]
    )
    await place(client, actor, buyer_map["id"], ids[1], executiveId=ids[0])  # by contact id
    await place(client, actor, buyer_map["id"], ids[2], executiveId="ada tester")  # by name
    await place(client, actor, buyer_map["id"], ids[3], executiveId="Someone Else")  # not here
    page = await page_of(client, actor, buyer_map["id"])
    executive_edges = re.findall(
        r'<g class="map-edge executive" data-source="([^"]+)" data-target="([^"]+)"', page.text
    )
    assert sorted(executive_edges) == sorted([(ids[0], ids[1]), (ids[0], ids[2])])
    assert "Executive sponsor" in page.text and "Someone Else" in page.text  # the table
    assert "<dt>Connections</dt><dd>2</dd>" in page.text
    cards = {
        cid: (float(x), float(y))
        for x, y, cid in re.findall(
            r'transform="translate\(([\d.]+),([\d.]+)\)" data-contact-id="([^"]+)"', page.text
        )
    }
    # Vertical (the default): the executive above the people it sponsors.
    assert cards[ids[0]][1] < cards[ids[1]][1] and cards[ids[0]][1] < cards[ids[2]][1]


async def test_an_executive_already_joined_by_an_edge_is_drawn_once(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    buyer_map, ids = await make_map(
        client, db, actor, [("Ada", "champion"), ("Bo", "neutral")], edges=[(0, 1)]
    )
    await place(client, actor, buyer_map["id"], ids[1], executiveId=ids[0])
    page = await page_of(client, actor, buyer_map["id"])
    assert page.text.count('class="edge-line"') == 1


def test_unconnected_cards_follow_the_maps_direction() -> None:
    people = [_person(i) for i in ("a", "b", "c")]
    vertical = layout({"nodes": [], "edges": []}, people, "vertical").cards
    assert len({c.x for c in vertical}) == 1  # one column
    assert vertical[0].y < vertical[1].y < vertical[2].y
    horizontal = layout({"nodes": [], "edges": []}, people, "horizontal").cards
    assert len({c.y for c in horizontal}) == 1  # one row
    assert horizontal[0].x < horizontal[1].x < horizontal[2].x


@pytest.mark.parametrize("width", [390, 1280])
async def test_a_vertical_map_with_an_executive_in_a_real_browser(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    client: httpx.AsyncClient,
    db: AsyncSession,
    actor: Actor,
    width: int,
) -> None:
    buyer_map, ids = await make_map(
        client, db, actor, [("Dana", "champion"), ("Marcus", "blocker"), ("Priya", None)],
        orientation="vertical",
    )  # fmt: skip
    await place(client, actor, buyer_map["id"], ids[1], executiveId=ids[0])
    page = await browser.new_page(viewport={"width": width, "height": 900})
    await page.goto(f"{origin}/maps/{buyer_map['id']}")
    await page.get_by_label("E-mail").fill(actor.user.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Northwind Traders").wait_for()
    boxes = {}
    for contact_id in ids:
        box = await page.locator(f'g.map-card[data-contact-id="{contact_id}"]').bounding_box()
        assert box is not None
        boxes[contact_id] = box
    dana, marcus, priya = (boxes[i] for i in ids)
    # Drawn vertically: each card below the one before, none beside another.
    assert (
        dana["y"] + dana["height"] <= marcus["y"] and marcus["y"] + marcus["height"] <= priya["y"]
    )
    line = page.locator(
        f'g.map-edge.executive[data-source="{ids[0]}"][data-target="{ids[1]}"] path'
    )
    assert await line.count() == 1
    edge = await line.bounding_box()
    assert edge is not None and edge["height"] > 20  # a visible line from Dana down to Marcus
    assert (
        edge["y"] >= dana["y"] + dana["height"] - 8
        and edge["y"] + edge["height"] <= marcus["y"] + 8
    )
    await page.screenshot(path=str(shots / f"map-executive-{width}.png"), full_page=True)
