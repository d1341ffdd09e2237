"""Where each operation lives on the client, from its tag and operationId.

- A tag is a resource: `accounts` → `client.accounts`; tags sharing a first word that is no
  resource of its own nest under it (`engage-messages` → `client.engage.messages`), the others
  stay whole (`plan-tasks` → `client.plan_tasks`, since `plans` is a tag).
- The method is the operationId's verb once the tag's own words are taken off
  (`getPlan` → `plans.get`, `bulkCreateAccounts` → `accounts.bulk_create`). Words left after
  them name a sub-resource when the path has that collection (`createWebhookEndpoint` →
  `webhooks.endpoints.create`, `listAccountBuyingGroups` → `accounts.buying_groups.list`), and
  otherwise end the method's name (`getEngageCampaignStatus` → `engage.campaigns.get_status`).
- An operationId that does not start with its tag's words keeps its whole name in snake_case
  (`listAccountContacts` → `contacts.list_account_contacts`), as does one whose name is taken.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from dataclasses import dataclass

# Words whose plural is themselves, never a collection of the path.
UNCOUNTABLE = frozenset({"analytics", "status", "metadata", "information", "progress"})


@dataclass(frozen=True)
class Place:
    namespace: tuple[str, ...]  # ("engage", "campaigns")
    method: str

    @property
    def dotted(self) -> str:
        return ".".join((*self.namespace, self.method))


def words(camel: str) -> list[str]:
    camel = camel.replace("OAuth", "Oauth")
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", camel)]


def snake(name: str) -> str:
    """A parameter or property name in Python: `planId` → `plan_id`, `from` → `from_`."""
    out = "_".join(words(name)) if re.search(r"[A-Z]", name) else name.replace("-", "_")
    out = re.sub(r"[^0-9a-zA-Z_]", "_", out)
    if keyword.iskeyword(out) or out[:1].isdigit():
        out += "_"
    return out


def camel_class(parts: list[str] | tuple[str, ...]) -> str:
    return "".join(p[:1].upper() + p[1:] for part in parts for p in part.split("_"))


def singular(word: str) -> str:
    if word in UNCOUNTABLE:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def plural(word: str) -> str:
    if word in UNCOUNTABLE:
        return word
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x")):
        return word + "es"
    return word + "s"


def namespaces(tags: set[str]) -> dict[str, tuple[str, ...]]:
    """Tag → its attribute path on the client."""
    first = Counter(tag.split("-")[0] for tag in tags if "-" in tag)
    out = {}
    for tag in tags:
        parts = tag.split("-")
        head = parts[0]
        if len(parts) > 1 and first[head] >= 2 and head not in tags and plural(head) not in tags:
            out[tag] = (head, "_".join(parts[1:]))
        else:
            out[tag] = ("_".join(parts),)
    return out


def place(operation_id: str, tag: str, namespace: tuple[str, ...], path: str) -> Place:
    parts = words(operation_id)
    verb, rest = parts[0], parts[1:]
    if verb == "bulk" and rest:
        verb, rest = f"bulk_{rest[0]}", rest[1:]
    own = [singular(w) for w in tag.split("-")]
    taken = 0
    while taken < min(len(rest), len(own)) and singular(rest[taken]) == own[taken]:
        taken += 1
    if taken == 0:
        return Place(namespace, snake(operation_id))
    left = rest[taken:]
    if not left:
        return Place(namespace, verb)
    segments = {s for s in path.split("/") if s and not s.startswith("{")}
    for end in range(len(left), 0, -1):
        last = left[end - 1]
        if last in UNCOUNTABLE:
            continue
        collection = "-".join([*left[: end - 1], plural(singular(last))])
        if collection in segments:
            method = "_".join([verb, *left[end:]])
            return Place((*namespace, collection.replace("-", "_")), method)
    return Place(namespace, "_".join([verb, *left]))


def places(operations: list[tuple[str, str, str]]) -> dict[str, Place]:
    """operationId → its place, for (operationId, tag, path) in document order. A name already
    taken (or shadowing a sub-resource) falls back to the whole operationId in snake_case."""
    spaces = namespaces({tag for _, tag, _ in operations})
    found: dict[str, Place] = {}
    for operation_id, tag, path in operations:
        found[operation_id] = place(operation_id, tag, spaces[tag], path)
    subs = {p.namespace[: i + 1] for p in found.values() for i in range(len(p.namespace))}
    seen: set[tuple[str, ...]] = set()
    for operation_id, _, _ in operations:
        spot = found[operation_id]
        key = (*spot.namespace, spot.method)
        if key in seen or key in subs:
            spot = Place(spot.namespace, snake(operation_id))
            key = (*spot.namespace, spot.method)
            found[operation_id] = spot
        seen.add(key)
    return found
