"""Where each card of a relationship map goes, and the curves between them: pure geometry for
the server-rendered SVG of /maps/{id} (the template draws it; Jinja escapes every text).

Nodes keep the position a client (React Flow) stored in `map.nodes[].position`; nodes without
one are laid out in tiers that follow the edges (source above target when the map is vertical,
left of it when horizontal), and cards with no connection one after another in the map's
direction (a column when vertical, a row when horizontal). A placed contact whose `executiveId`
names another contact of the map (its id, full name or e-mail) is connected to that executive."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CARD_W, CARD_H = 240, 132
NOTE_W, NOTE_H = 180, 48
PAD = 32
MAX_PER_TIER = 6
# The relationship-map service gives a node it adds for a placed contact this placeholder
# position (a single column, 160 apart); a map whose nodes all sit there was never arranged.
SERVICE_COLUMN_STEP = 160

# Support statuses are free strings: known words pick a tone, anything else is neutral.
TONES: tuple[tuple[str, str], ...] = (
    ("champion", "Champion"),
    ("supporter", "Supporter"),
    ("neutral", "Neutral"),
    ("detractor", "Detractor"),
    ("blocker", "Blocker"),
    ("unknown", "Unknown"),
)
_TONE_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "blocker",
        frozenset({"blocker", "blocking", "blocks", "veto", "opponent", "opposed", "hostile"}),
    ),
    (
        "detractor",
        frozenset(
            {
                "detractor",
                "negative",
                "skeptic",
                "sceptic",
                "skeptical",
                "sceptical",
                "resistant",
                "unsupportive",
                "critic",
                "against",
            }
        ),
    ),
    ("champion", frozenset({"champion", "sponsor", "advocate", "evangelist"})),
    (
        "supporter",
        frozenset({"supporter", "supportive", "support", "positive", "ally", "coach", "favorable"}),
    ),
)
_UNKNOWN_WORDS = frozenset({"", "unknown", "none", "n/a", "na", "tbd", "null", "unset"})


def support_tone(status: str | None) -> str:
    """The colour family of a support status: one of TONES' keys."""
    if status is None or status.strip().lower() in _UNKNOWN_WORDS:
        return "unknown"
    words = set(re.findall(r"[a-z]+", status.lower()))
    for tone, vocabulary in _TONE_WORDS:
        if words & vocabulary:
            return tone
    return "neutral"


@dataclass(frozen=True)
class Person:
    """A placed contact with what its card shows."""

    contact_id: str
    name: str
    title: str | None
    email: str | None
    support_status: str | None
    decision_status: str | None
    contact_status: str | None
    functional_role: str | None
    executive_id: str | None = None

    @property
    def tone(self) -> str:
        return support_tone(self.support_status)


EXECUTIVE_LABEL = "Executive sponsor"


def executives(people: list[Person]) -> dict[str, Person]:
    """Each placed contact whose `executiveId` (free text) names another placed contact — by
    contact id, else full name, else e-mail, case-insensitively — with that executive."""
    by_key: dict[str, Person] = {}
    for kind in ("email", "name", "contact_id"):  # the id wins over a name, a name over an e-mail
        for person in people:
            value = getattr(person, kind)
            if value and value.strip():
                by_key[value.strip().lower()] = person
    found = {}
    for person in people:
        key = (person.executive_id or "").strip().lower()
        executive = by_key.get(key) if key else None
        if executive is not None and executive.contact_id != person.contact_id:
            found[person.contact_id] = executive
    return found


@dataclass
class Card:
    node_id: str
    x: float
    y: float
    w: float
    h: float
    person: Person | None = None  # None: a labelled non-contact node
    label: str = ""

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass(frozen=True)
class Link:
    source: str
    target: str
    d: str
    label: str | None
    label_x: float
    label_y: float
    executive: bool = False  # drawn from the target's executiveId, not from map.edges


@dataclass
class MapLayout:
    cards: list[Card] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    width: float = 2 * PAD + CARD_W
    height: float = 2 * PAD + CARD_H

    @property
    def people(self) -> list[Card]:
        return [c for c in self.cards if c.person is not None]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _position(node: Mapping[str, object]) -> tuple[float, float] | None:
    pos = node.get("position")
    if not isinstance(pos, Mapping):
        return None
    x, y = _number(pos.get("x")), _number(pos.get("y"))
    return None if x is None or y is None else (x, y)


def _service_column(nodes: list[Mapping[str, object]]) -> bool:
    return all(_position(n) == (0.0, float(SERVICE_COLUMN_STEP * i)) for i, n in enumerate(nodes))


def _label(node: Mapping[str, object]) -> str | None:
    data = node.get("data")
    if isinstance(data, Mapping):
        for key in ("label", "name", "title"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key]).strip()
    return None


def _edge_label(edge: Mapping[str, object]) -> str | None:
    label = edge.get("label")
    if isinstance(label, str) and label.strip():
        return label.strip()
    data = edge.get("data")
    if isinstance(data, Mapping) and isinstance(data.get("label"), str) and data["label"].strip():
        return str(data["label"]).strip()
    return None


def _edges(graph: Mapping[str, object]) -> list[tuple[str, str, str | None]]:
    raw = graph.get("edges")
    out = []
    for edge in raw if isinstance(raw, list) else []:
        if not isinstance(edge, Mapping) or edge.get("source") is None:
            continue
        if edge.get("target") is not None:
            out.append((str(edge["source"]), str(edge["target"]), _edge_label(edge)))
    return out


def _tiers(ids: list[str], edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Longest-path tiers along the edges (cycles are cut by the tier cap), each tier ordered
    by where its parents sit so that lines cross less."""
    index = {node: i for i, node in enumerate(ids)}
    pairs = [(s, t) for s, t in edges if s in index and t in index and s != t]
    depth = dict.fromkeys(ids, 0)
    for _ in range(len(ids)):
        changed = False
        for s, t in pairs:
            if depth[s] + 1 > depth[t] and depth[s] + 1 < len(ids):
                depth[t] = depth[s] + 1
                changed = True
        if not changed:
            break
    linked = {node for pair in pairs for node in pair}
    tiers: list[list[str]] = [[] for _ in range(max((depth[n] for n in linked), default=-1) + 1)]
    for node in ids:
        if node in linked:
            tiers[depth[node]].append(node)
        else:  # no connection: one after another along the map's direction
            tiers.append([node])
    place: dict[str, float] = {}
    for tier in tiers:
        parents = {node: [place[s] for s, t in pairs if t == node and s in place] for node in tier}
        tier.sort(key=lambda n: (sum(parents[n]) / len(parents[n]) if parents[n] else -1, index[n]))
        place.update({node: float(i) for i, node in enumerate(tier)})
    # Wrap a crowded tier onto several rows (columns when horizontal).
    wrapped: list[list[str]] = []
    for tier in tiers:
        wrapped.extend(tier[i : i + MAX_PER_TIER] for i in range(0, len(tier), MAX_PER_TIER))
    return wrapped


def _auto_place(cards: list[Card], edges: list[tuple[str, str]], horizontal: bool) -> None:
    by_id = {c.node_id: c for c in cards}
    tiers = _tiers([c.node_id for c in cards], edges)
    gap_along, gap_across = (64, 28) if horizontal else (72, 32)

    def span(tier: list[str]) -> float:
        sizes = [by_id[n].h if horizontal else by_id[n].w for n in tier]
        return sum(sizes) + gap_across * (len(sizes) - 1)

    widest = max((span(t) for t in tiers), default=0.0)
    along = 0.0
    for tier in tiers:
        across = (widest - span(tier)) / 2
        depth = max((by_id[n].w if horizontal else by_id[n].h) for n in tier)
        for node in tier:
            card = by_id[node]
            if horizontal:
                card.x, card.y = along, across
                across += card.h + gap_across
            else:
                card.x, card.y = across, along
                across += card.w + gap_across
        along += depth + gap_along


def _curve(s: Card, t: Card) -> tuple[str, float, float]:
    """A cubic curve from the side of `s` facing `t` to the side of `t` facing `s`."""
    dx, dy = t.cx - s.cx, t.cy - s.cy
    if abs(dy) / s.h >= abs(dx) / s.w:
        sign = 1 if dy >= 0 else -1
        x0, y0 = s.cx, s.cy + sign * s.h / 2
        x3, y3 = t.cx, t.cy - sign * t.h / 2
        k = max(28.0, abs(y3 - y0) / 2) * sign
        x1, y1, x2, y2 = x0, y0 + k, x3, y3 - k
    else:
        sign = 1 if dx >= 0 else -1
        x0, y0 = s.cx + sign * s.w / 2, s.cy
        x3, y3 = t.cx - sign * t.w / 2, t.cy
        k = max(28.0, abs(x3 - x0) / 2) * sign
        x1, y1, x2, y2 = x0 + k, y0, x3 - k, y3
    d = f"M{x0:.1f},{y0:.1f} C{x1:.1f},{y1:.1f} {x2:.1f},{y2:.1f} {x3:.1f},{y3:.1f}"
    mid_x = (x0 + 3 * x1 + 3 * x2 + x3) / 8
    mid_y = (y0 + 3 * y1 + 3 * y2 + y3) / 8
    return d, mid_x, mid_y


def layout(graph: Mapping[str, object], people: list[Person], orientation: str) -> MapLayout:
    """Cards for every placed contact (and labelled non-contact node), and the edges between
    drawn cards."""
    by_contact = {p.contact_id: p for p in people}
    raw_nodes = graph.get("nodes")
    nodes = [
        n for n in (raw_nodes if isinstance(raw_nodes, list) else []) if isinstance(n, Mapping)
    ]
    use_positions = not _service_column(nodes)
    cards: list[Card] = []
    fixed: list[Card] = []
    seen: set[str] = set()
    for node in nodes:
        node_id = str(node.get("id"))
        if node.get("id") is None or node_id in seen:
            continue
        person = by_contact.get(node_id)
        label = _label(node)
        if person is not None:
            card = Card(node_id, 0, 0, CARD_W, CARD_H, person=person)
        elif node.get("type") != "contact" and label is not None:
            card = Card(node_id, 0, 0, NOTE_W, NOTE_H, label=label)
        else:  # a contact node without a placement, or an unlabelled helper node
            continue
        seen.add(node_id)
        cards.append(card)
        position = _position(node) if use_positions else None
        if position is not None:
            card.x, card.y = position
            fixed.append(card)
    cards.extend(
        Card(p.contact_id, 0, 0, CARD_W, CARD_H, person=p)
        for p in people
        if p.contact_id not in seen
    )
    loose = [c for c in cards if c not in fixed]
    edges = _edges(graph)
    drawn_ids = {c.node_id for c in cards}
    # A connection from each executive named by a contact's executiveId, unless map.edges
    # already joins the two.
    joined = {frozenset((s, t)) for s, t, _ in edges}
    executive_edges = {
        (executive.contact_id, contact_id)
        for contact_id, executive in executives(people).items()
        if contact_id in drawn_ids
        and executive.contact_id in drawn_ids
        and frozenset((executive.contact_id, contact_id)) not in joined
    }
    edges += sorted((s, t, EXECUTIVE_LABEL) for s, t in executive_edges)
    horizontal = orientation == "horizontal"
    if loose:
        _auto_place(loose, [(s, t) for s, t, _ in edges], horizontal)
        if fixed:  # beside the arranged part, never on top of it
            if horizontal:
                shift_x, shift_y = max(c.x + c.w for c in fixed) + 64, min(c.y for c in fixed)
            else:
                shift_x, shift_y = min(c.x for c in fixed), max(c.y + c.h for c in fixed) + 72
            for card in loose:
                card.x += shift_x
                card.y += shift_y
    result = MapLayout(cards=cards)
    if not cards:
        return result
    min_x, min_y = min(c.x for c in cards), min(c.y for c in cards)
    for card in cards:
        card.x += PAD - min_x
        card.y += PAD - min_y
    result.width = max(c.x + c.w for c in cards) + PAD
    result.height = max(c.y + c.h for c in cards) + PAD
    drawn = {c.node_id: c for c in cards}
    for source, target, label in edges:
        if source in drawn and target in drawn and source != target:
            d, lx, ly = _curve(drawn[source], drawn[target])
            executive = (source, target) in executive_edges
            result.links.append(Link(source, target, d, label, lx, ly, executive))
    return result


def clip(text: str | None, limit: int) -> str:
    """SVG text does not wrap: cut long values (the full text is in the card's tooltip)."""
    if not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def shown(text: str | None, fallback: str = "—") -> str:
    """A free-string attribute as a label: first letter up ("champion" → "Champion")."""
    if not text or not text.strip():
        return fallback
    text = text.strip()
    return text[:1].upper() + text[1:]


def pill_width(text: str) -> float:
    return round(len(text) * 6.4 + 18, 1)
