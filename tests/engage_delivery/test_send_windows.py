"""Contract §14 "Send windows": campaigns carry `sendWindow`, contacts an optional IANA
`timeZone`; a step due outside the window waits for its next opening (in the contact's zone,
else `fallbackTimeZone`, default UTC; or a fixed zone), and the later steps keep their delays
from when the previous one was actually sent. DST edges and windows crossing midnight."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from salesplan.engage.delivery.windows import next_opening
from salesplan.kit.clock import utcnow
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.test_campaign_start import (
    enroll,
    enrollment,
    make_campaign,
    queue,
    start,
    work,
)
from tests.engage_delivery.test_worker import make_due
from tests.fixtures.crm import make_account, make_contact

API = "/api/v1"
WEEKDAYS = ["MON", "TUE", "WED", "THU", "FRI"]
EVERY_DAY = [*WEEKDAYS, "SAT", "SUN"]
OFFICE = {"days": WEEKDAYS, "start": "09:00", "end": "17:00", "timeZone": "contact"}


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


# --- the rule, on fixed instants ------------------------------------------------------------


@pytest.mark.parametrize(
    ("due", "zone", "expected"),
    [
        # Inside: unchanged (Wednesday 10:00 in New York).
        (utc(2026, 11, 25, 15, 0), "America/New_York", utc(2026, 11, 25, 15, 0)),
        # After hours on Wednesday → Thursday 09:00 EST.
        (utc(2026, 11, 25, 23, 0), "America/New_York", utc(2026, 11, 26, 14, 0)),
        # Saturday → Monday 09:00 EST.
        (utc(2026, 11, 28, 12, 0), "America/New_York", utc(2026, 11, 30, 14, 0)),
        # Friday evening EST before the spring change → Monday 09:00 EDT (13:00 UTC, not 14).
        (utc(2026, 3, 6, 23, 0), "America/New_York", utc(2026, 3, 9, 13, 0)),
        # Friday evening EDT before the autumn change → Monday 09:00 EST (14:00 UTC).
        (utc(2026, 10, 30, 22, 0), "America/New_York", utc(2026, 11, 2, 14, 0)),
        # Europe changes on another weekend: Monday 30 March 09:00 CEST = 07:00 UTC.
        (utc(2026, 3, 27, 17, 0), "Europe/Berlin", utc(2026, 3, 30, 7, 0)),
        # 16:59 local is inside, 17:00 local is closed (end excluded).
        (utc(2026, 11, 25, 21, 59), "America/New_York", utc(2026, 11, 25, 21, 59)),
        (utc(2026, 11, 25, 22, 0), "America/New_York", utc(2026, 11, 26, 14, 0)),
        # Before opening on a weekday → 09:00 that day (Tokyo, no DST).
        (utc(2026, 11, 25, 23, 0), "Asia/Tokyo", utc(2026, 11, 26, 0, 0)),
    ],
)
def test_a_due_time_outside_the_window_moves_to_its_next_opening(
    due: datetime, zone: str, expected: datetime
) -> None:
    assert next_opening(OFFICE, due, zone) == expected


def test_wall_times_the_clock_skips_or_repeats() -> None:
    # 2026-03-08: New York clocks go 02:00 EST → 03:00 EDT. A 02:30 opening that day does not
    # exist: it opens at 03:30 EDT (07:30 UTC), moved forward by the gap.
    gap = {"days": ["SUN"], "start": "02:30", "end": "04:00", "timeZone": "America/New_York"}
    assert next_opening(gap, utc(2026, 3, 8, 5, 0), None) == utc(2026, 3, 8, 7, 30)
    # 2026-11-01: 01:00 to 02:00 happens twice (EDT, then EST); 01:30 opens at the first (EDT).
    fold = {"days": ["SUN"], "start": "01:30", "end": "03:00", "timeZone": "America/New_York"}
    assert next_opening(fold, utc(2026, 11, 1, 4, 0), None) == utc(2026, 11, 1, 5, 30)
    # …and inside it during the repeated hour stays inside.
    assert next_opening(fold, utc(2026, 11, 1, 6, 15), None) == utc(2026, 11, 1, 6, 15)


def test_a_window_crossing_midnight_belongs_to_the_day_it_opens() -> None:
    night = {"days": ["FRI"], "start": "22:00", "end": "06:00", "timeZone": "UTC"}
    assert next_opening(night, utc(2026, 11, 27, 23, 0), None) == utc(2026, 11, 27, 23, 0)
    # Saturday 03:00 is still Friday's window.
    assert next_opening(night, utc(2026, 11, 28, 3, 0), None) == utc(2026, 11, 28, 3, 0)
    # Saturday 07:00: closed until next Friday 22:00.
    assert next_opening(night, utc(2026, 11, 28, 7, 0), None) == utc(2026, 12, 4, 22, 0)
    # Friday 12:00 waits for the evening.
    assert next_opening(night, utc(2026, 11, 27, 12, 0), None) == utc(2026, 11, 27, 22, 0)


def test_the_zone_is_the_contacts_else_the_fallback_else_utc() -> None:
    due = utc(2026, 11, 25, 7, 30)  # Wednesday: 08:30 Paris, 16:30 Tokyo, 07:30 UTC
    window = {**OFFICE, "fallbackTimeZone": "Asia/Tokyo"}
    assert next_opening(window, due, "Europe/Paris") == utc(2026, 11, 25, 8, 0)
    assert next_opening(window, due, None) == due  # Tokyo: open
    assert next_opening(OFFICE, due, None) == utc(2026, 11, 25, 9, 0)  # UTC
    fixed = {**OFFICE, "timeZone": "Asia/Tokyo"}
    assert next_opening(fixed, due, "Europe/Paris") == due
    late = utc(2026, 11, 25, 9, 0)  # 18:00 Tokyo: closed until Thursday 09:00 there
    assert next_opening(fixed, late, "Europe/Paris") == utc(2026, 11, 26, 0, 0)
    assert next_opening(None, due, "Europe/Paris") == due


# --- the API: shapes and validation --------------------------------------------------------


async def campaign_body(client, actor, **extra: Any) -> dict[str, Any]:
    template = await client.post(
        f"{API}/engage/templates",
        json={"name": "T", "channel": "EMAIL", "subject": "Hi", "body": "Hello"},
        headers=actor.in_org(),
    )
    step = {"channel": "EMAIL", "templateId": template.json()["id"], "delayMinutes": 0}
    return {"name": "Launch", "flow": {"steps": [step]}} | extra


async def test_a_campaign_keeps_its_send_window(client, actor) -> None:
    window = {
        "days": ["FRI", "MON", "MON"],
        "start": "09:00",
        "end": "17:30",
        "timeZone": "contact",
        "fallbackTimeZone": "Europe/Paris",
    }
    body = await campaign_body(client, actor, sendWindow=window)
    created = await client.post(f"{API}/engage/campaigns", json=body, headers=actor.in_org())
    assert created.status_code == 201, created.text
    expected = window | {"days": ["MON", "FRI"]}
    assert created.json()["sendWindow"] == expected
    path = f"{API}/engage/campaigns/{created.json()['id']}"
    assert (await client.get(path, headers=actor.in_org())).json()["sendWindow"] == expected
    night = {"days": ["SUN"], "start": "22:00", "end": "02:00", "timeZone": "Asia/Tokyo"}
    patched = await client.patch(path, json={"sendWindow": night}, headers=actor.in_org())
    assert patched.status_code == 200, patched.text
    assert patched.json()["sendWindow"] == night | {"fallbackTimeZone": None}
    cleared = await client.patch(path, json={"sendWindow": None}, headers=actor.in_org())
    assert cleared.json()["sendWindow"] is None
    plain = await client.post(
        f"{API}/engage/campaigns", json=await campaign_body(client, actor), headers=actor.in_org()
    )
    assert plain.json()["sendWindow"] is None


@pytest.mark.parametrize(
    ("window", "status", "field"),
    [
        ({"timeZone": "Mars/Olympus_Mons"}, 422, "sendWindow.timeZone"),
        ({"timeZone": "../../etc/passwd"}, 422, "sendWindow.timeZone"),
        ({"timeZone": "contact", "fallbackTimeZone": "Nowhere/City"}, 422, None),
        ({"start": "09:00", "end": "09:00"}, 422, "sendWindow.end"),
        ({"days": ["FUNDAY"]}, 400, None),
        ({"days": []}, 400, None),
        ({"start": "25:00"}, 400, None),
        ({"end": "9:00"}, 400, None),
        ({"colour": "blue"}, 400, None),
    ],
)
async def test_bad_send_windows_are_refused(client, actor, window, status, field) -> None:
    full = {"days": WEEKDAYS, "start": "09:00", "end": "17:00", "timeZone": "UTC"} | window
    body = await campaign_body(client, actor, sendWindow=full)
    response = await client.post(f"{API}/engage/campaigns", json=body, headers=actor.in_org())
    assert response.status_code == status, response.text
    if status == 422:
        assert response.json()["error"]["code"] == "unprocessable"
        if field:
            assert response.json()["error"]["details"]["field"] == field
    bulk = await client.post(
        f"{API}/engage/campaigns/bulk", json={"campaigns": [body]}, headers=actor.in_org()
    )
    assert bulk.json()["results"][0]["status"] == status


async def test_contacts_take_an_iana_time_zone(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    made = await client.post(
        f"{API}/accounts/{account.id}/contacts",
        json={"firstName": "Ada", "timeZone": "Europe/London"},
        headers=actor.in_org(),
    )
    assert made.status_code == 201, made.text
    contact_id = made.json()["id"]
    assert made.json()["timeZone"] == "Europe/London"
    path = f"{API}/contacts/{contact_id}"
    assert (await client.get(path, headers=actor.in_org())).json()["timeZone"] == "Europe/London"
    listed = await client.get(f"{API}/contacts", headers=actor.in_org())
    assert [c["timeZone"] for c in listed.json()["data"]] == ["Europe/London"]
    patched = await client.patch(path, json={"timeZone": "Asia/Tokyo"}, headers=actor.in_org())
    assert patched.json()["timeZone"] == "Asia/Tokyo"
    for bad in ("Atlantis/Capital", "EST5EDT/x"):
        refused = await client.patch(path, json={"timeZone": bad}, headers=actor.in_org())
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["details"]["field"] == "timeZone"
        put = await client.put(
            path, json={"firstName": "A", "timeZone": bad}, headers=actor.in_org()
        )
        assert put.status_code == 422
    assert (await client.get(path, headers=actor.in_org())).json()["timeZone"] == "Asia/Tokyo"
    cleared = await client.patch(path, json={"timeZone": None}, headers=actor.in_org())
    assert cleared.json()["timeZone"] is None
    bad_create = await client.post(
        f"{API}/accounts/{account.id}/contacts",
        json={"firstName": "B", "timeZone": "Nowhere"},
        headers=actor.in_org(),
    )
    assert bad_create.status_code == 422


async def test_openapi_documents_send_window_and_time_zone(client) -> None:
    doc = (await client.get(f"{API}/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    window = schemas["SendWindowIn"]["properties"]
    assert set(window) == {"days", "start", "end", "timeZone", "fallbackTimeZone"}
    assert "sendWindow" in schemas["CampaignIn"]["properties"]
    assert "sendWindow" in schemas["CampaignOut"]["properties"]
    for name in ("ContactIn", "ContactOut", "ContactPatch", "ContactReplace"):
        assert "timeZone" in schemas[name]["properties"], name


# --- scheduling, over the real SMTP sink ---------------------------------------------------


def hhmm(moment: datetime) -> str:
    return moment.strftime("%H:%M")


def next_wall(after: datetime, at: str, zone: ZoneInfo) -> datetime:
    """The first instant after `after` whose wall time in `zone` is `at` (a zone without DST)."""
    local = after.astimezone(zone)
    hours, minutes = map(int, at.split(":"))
    candidate = local.replace(hour=hours, minute=minutes, second=0, microsecond=0)
    if candidate <= local:
        candidate += timedelta(days=1)
    return candidate.astimezone(UTC)


async def scheduled_at(db, message_id: str) -> datetime:
    stmt = select(EngageMessage.scheduled_at, EngageMessage.sent_at).where(
        EngageMessage.id == uuid.UUID(message_id)
    )
    row = (await db.execute(stmt.execution_options(populate_existing=True))).one()
    return row


async def test_a_step_outside_the_window_waits_and_later_steps_count_from_the_send(
    app, client, actor, db, smtp
) -> None:
    """Tokyo (no DST): the window is open now for another 90 minutes. Step 0 goes at once;
    step 1 (120 minutes later) would fall after closing, so it waits for tomorrow's opening;
    once it is actually sent, step 2 is due 30 minutes after that send."""
    tokyo = ZoneInfo("Asia/Tokyo")
    now = utcnow()
    opens = hhmm((now - timedelta(minutes=60)).astimezone(tokyo))
    closes = hhmm((now + timedelta(minutes=90)).astimezone(tokyo))
    account, _ = await make_account(db, actor.org.id)
    ada = await make_contact(db, account, email="ada@example.com", time_zone="Asia/Tokyo")
    campaign = await make_campaign(client, actor, ("EMAIL", 0), ("EMAIL", 120), ("EMAIL", 30))
    window = {"days": EVERY_DAY, "start": opens, "end": closes, "timeZone": "contact"}
    patched = await client.patch(
        f"{API}/engage/campaigns/{campaign['id']}",
        json={"sendWindow": window},
        headers=actor.in_org(),
    )
    assert patched.status_code == 200, patched.text
    await enroll(app, client, actor, campaign, [ada.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1

    await work(app, smtp)
    assert [str(m["Subject"]) for m in smtp.received] == ["Step 0: hello Ada"]
    items = {i["subject"]: i for i in await queue(client, actor, campaign["id"])}
    _, sent0 = await scheduled_at(db, items["Step 0: hello Ada"]["id"])
    second = items["Step 1: hello Ada"]
    assert second["status"] == "scheduled"
    due1, _ = await scheduled_at(db, second["id"])
    expected = next_wall(sent0 + timedelta(minutes=120), opens, tokyo)
    assert due1 == expected
    assert due1 > sent0 + timedelta(minutes=120)
    row = await enrollment(db, campaign["id"], ada.id)
    assert (row.state, row.current_step, row.next_run_at) == ("scheduled", 1, due1)

    await make_due(db)  # the opening comes; the step is actually sent now
    await work(app, smtp)
    assert len(smtp.received) == 2
    items = {i["subject"]: i for i in await queue(client, actor, campaign["id"])}
    _, sent1 = await scheduled_at(db, items["Step 1: hello Ada"]["id"])
    due2, _ = await scheduled_at(db, items["Step 2: hello Ada"]["id"])
    # Counted from the actual send, not from the opening step 1 had been moved to.
    assert due2 == sent1 + timedelta(minutes=30)


async def test_a_contact_without_a_zone_uses_the_fallback(app, client, actor, db, smtp) -> None:
    """The window is closed now in the fallback zone (Tokyo) but open in UTC: the first step
    waits for Tokyo's opening."""
    tokyo = ZoneInfo("Asia/Tokyo")
    now = utcnow()
    opens = hhmm((now + timedelta(minutes=180)).astimezone(tokyo))
    closes = hhmm((now + timedelta(minutes=240)).astimezone(tokyo))
    account, _ = await make_account(db, actor.org.id)
    grace = await make_contact(db, account, email="grace@example.com")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    window = {
        "days": EVERY_DAY,
        "start": opens,
        "end": closes,
        "timeZone": "contact",
        "fallbackTimeZone": "Asia/Tokyo",
    }
    await client.patch(
        f"{API}/engage/campaigns/{campaign['id']}",
        json={"sendWindow": window},
        headers=actor.in_org(),
    )
    await enroll(app, client, actor, campaign, [grace.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1
    await work(app, smtp)
    assert smtp.received == []
    (item,) = await queue(client, actor, campaign["id"])
    assert item["status"] == "scheduled"
    due, _ = await scheduled_at(db, item["id"])
    assert due == next_wall(now, opens, tokyo)


async def test_bulk_created_contacts_take_a_time_zone_and_refuse_unknown_ones(actor, db) -> None:
    """The CSV importer's path (contacts' bulk create): a row per outcome."""
    from salesplan.auth.principal import RequestContext
    from salesplan.contacts.service import bulk_create_contacts

    account, _ = await make_account(db, actor.org.id)
    ctx = RequestContext.internal(actor.org.id)
    rows = [
        {"accountId": str(account.id), "firstName": "Ada", "timeZone": "Europe/Paris"},
        {"accountId": str(account.id), "firstName": "Bob", "timeZone": "Nowhere/Town"},
    ]
    result = await bulk_create_contacts(db, ctx, rows)
    await db.commit()
    assert [r["status"] for r in result["results"]] == [201, 422]
    assert result["results"][0]["data"]["timeZone"] == "Europe/Paris"
    assert result["results"][1]["error"]["details"]["field"] == "timeZone"
