"""An unsupported method on an existing path is a 405 with the envelope and an `Allow` header
naming what the path takes (contract §2), on every path of the OpenAPI document, including
a literal segment beside a parameter one (`…/milestones/reorder` beside
`…/milestones/{milestoneId}`: issue 27 item 9, PATCH there was the parameter route's 400)."""

from __future__ import annotations

import re
import uuid

from tests.fixtures.envelope import assert_envelope

METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def _allow(value: str) -> set[str]:
    return {m.strip() for m in value.split(",")}


async def test_every_path_answers_405_to_the_methods_it_does_not_take(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    checked = 0
    for template, item in doc["paths"].items():
        documented = {m.upper() for m in item if m.upper() in METHODS}
        path = re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), template)
        expected = documented | {"OPTIONS"} | ({"HEAD"} if "GET" in documented else set())
        options = await client.options(path)
        assert options.status_code == 204, path
        assert _allow(options.headers["allow"]) == expected, path
        for method in METHODS - documented:
            resp = await client.request(method, path)
            assert_envelope(resp, 405, "method_not_allowed")
            assert _allow(resp.headers["allow"]) == expected, f"{method} {path}"
            checked += 1
    assert checked > 100


async def test_patch_on_milestones_reorder_is_405(client, actor) -> None:
    path = f"/api/v1/plans/{uuid.uuid4()}/milestones/reorder"
    for method in ("PATCH", "GET", "DELETE", "PUT"):
        resp = await client.request(method, path, json={}, headers=actor.in_org())
        assert_envelope(resp, 405, "method_not_allowed")
        assert _allow(resp.headers["allow"]) == {"POST", "OPTIONS"}
    # The route itself still answers its own method (the plan does not exist: 404).
    resp = await client.post(path, json={"milestoneIds": []}, headers=actor.in_org())
    assert resp.status_code in (400, 404), resp.text
    # And the parameter route beside it keeps its methods for a real id.
    milestone = f"/api/v1/plans/{uuid.uuid4()}/milestones/{uuid.uuid4()}"
    assert (await client.patch(milestone, json={}, headers=actor.in_org())).status_code == 404
