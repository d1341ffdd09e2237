"""Issue 38: one date-time type for every input. A valid date-time whose instant falls outside
the storable range (`0001-01-01T00:00:00+14:00` is in year 0 in UTC) is a 400
`validation_error` wherever a date-time is accepted, never a 500; a bad value already stored in
a DYNAMIC list's criteria is read defensively (its members and enrollments still answer)."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest

from salesplan.models.engage import EngageList
from tests.engage.helpers import API as ENGAGE
from tests.engage.helpers import campaign, run_worker
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope

EXTREMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-23:59"]
A_ID = "0190a0a0-0000-7000-8000-000000000001"
SEND = {"channel": "EMAIL", "to": "a@b.example", "subject": "s", "body": "b"}


def _bodies(value: str) -> list[tuple[str, str, dict[str, object]]]:
    """(method, path, body) of every body that takes a date-time. Validation comes before
    existence (contract §2), so ids that name nothing are enough."""
    return [
        ("POST", f"/api/v1/webhooks/endpoints/{A_ID}/replay", {"since": value}),
        ("POST", "/api/v1/engage/messages/send", SEND | {"scheduledAt": value}),
        (
            "POST",
            f"{ENGAGE}/lists",
            {"name": "L", "type": "DYNAMIC", "criteria": {"updatedSince": value}},
        ),
        ("PATCH", f"{ENGAGE}/lists/{A_ID}", {"criteria": {"updatedSince": value}}),
        ("PATCH", f"/api/v1/calendar/events/{A_ID}", {"start": value}),
        ("PATCH", f"/api/v1/calendar/events/{A_ID}", {"end": value}),
        (
            "POST",
            f"/api/v1/plans/{A_ID}/shares",
            {"email": "a@b.example", "role": "viewer", "expiresAt": value},
        ),
    ]


def _queries(value: str) -> list[str]:
    """Every query parameter that takes a date-time."""
    v = quote(value)
    return [
        f"/api/v1/calendar/events?from={v}",
        f"/api/v1/calendar/events?to={v}",
        f"/api/v1/accounts?updatedSince={v}",
        f"/api/v1/contacts?updatedSince={v}",
        f"/api/v1/plans?updatedSince={v}",
        f"/api/v1/opportunities?updatedSince={v}",
        f"/api/v1/leads?updatedSince={v}",
    ]


@pytest.mark.parametrize("value", EXTREMES)
async def test_an_extreme_date_time_in_a_body_is_a_400(client, actor, value) -> None:
    for method, path, body in _bodies(value):
        headers = actor.in_org() | {"Idempotency-Key": str(uuid.uuid4())}
        resp = await client.request(method, path, json=body, headers=headers)
        assert_envelope(resp, 400, "validation_error")


@pytest.mark.parametrize("value", EXTREMES)
async def test_an_extreme_date_time_in_a_query_is_a_400(client, actor, value) -> None:
    for path in _queries(value):
        assert_envelope(await client.get(path, headers=actor.in_org()), 400, "validation_error")


@pytest.mark.parametrize("value", [*EXTREMES, "not a date", 12])
async def test_a_bad_stored_criterion_does_not_break_the_list(
    app, client, actor, db, value
) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    stored = EngageList(
        organization_id=actor.org.id,
        name="Broken",
        type="DYNAMIC",
        criteria={"updatedSince": value, "accountIds": [str(account.id), "nope"]},
    )
    db.add(stored)
    await db.commit()
    members = await client.get(f"{ENGAGE}/lists/{stored.id}/members", headers=actor.headers)
    assert members.status_code == 200, members.text
    # An unreadable condition matches nobody: it never widens who is written to.
    assert members.json()["data"] == []
    listed = await client.get(f"{ENGAGE}/lists/{stored.id}", headers=actor.headers)
    assert listed.status_code == 200, listed.text
    created = await campaign(client, actor)
    resp = await client.post(
        f"{ENGAGE}/campaigns/{created['id']}/enrollments",
        json={"listId": str(stored.id)},
        headers=actor.headers,
    )
    assert resp.status_code == 202, resp.text
    await run_worker(app)
    job = await client.get(
        f"{ENGAGE}/enrollment-jobs/{resp.json()['job']['id']}", headers=actor.headers
    )
    assert job.status_code == 200, job.text
    assert job.json()["status"] == "completed"
    assert contact.id is not None


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999+00:00"])
async def test_the_ends_of_the_range_are_taken_and_never_a_500(client, actor, value) -> None:
    for method, path, body in _bodies(value):
        headers = actor.in_org() | {"Idempotency-Key": str(uuid.uuid4())}
        resp = await client.request(method, path, json=body, headers=headers)
        assert resp.status_code < 500, (path, resp.text)
        assert resp.status_code != 400, (path, resp.text)
    for path in _queries(value):
        resp = await client.get(path, headers=actor.in_org())
        assert resp.status_code == 200, (path, resp.text)
