"""The Python client against a live server (contract §17): models with `Decimal` money,
`date` and aware `datetime`; `.list()` one page and `.list_all()` every row once in cursor
mode; plans with their children; conditional reads answering `NotModified`;
`with_raw_response`; the async client the same."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from salesplan_client import (
    NOT_GIVEN,
    AsyncSalesplan,
    NotModified,
    Page,
    RawResponse,
    Salesplan,
    models,
)
from tests.client.conftest import Live


def sync_client(live: Live, actor: Any, **options: Any) -> Salesplan:
    return Salesplan(live.origin, api_key=actor.key, organization_id=str(actor.org.id), **options)


def async_client(live: Live, actor: Any, **options: Any) -> AsyncSalesplan:
    return AsyncSalesplan(
        live.origin + "/api/v1", api_key=actor.key, organization_id=str(actor.org.id), **options
    )


@pytest.mark.parametrize("amount", ["1234567.89", "0.57", "0.10", "9999999999999.99", "42", "1E+3"])
async def test_money_round_trips_as_an_exact_decimal(live, actor, amount) -> None:
    with sync_client(live, actor) as sp:
        account = sp.accounts.create(name="Acme", annual_revenue=Decimal(amount))
        assert isinstance(account, models.Account)
        assert type(account.annual_revenue) is Decimal
        assert account.annual_revenue == Decimal(amount)
        fetched = sp.accounts.get(account.id)
        assert fetched.annual_revenue == Decimal(amount)
        opp = sp.opportunities.create(
            account_id=account.id, name="Deal", amount=Decimal(amount), close_date=date(2027, 1, 31)
        )
        assert type(opp.amount) is Decimal and opp.amount == Decimal(amount)
        assert opp.close_date == date(2027, 1, 31)


async def test_dates_are_dates_and_instants_are_aware(live, actor) -> None:
    with sync_client(live, actor) as sp:
        account = sp.accounts.create(name="Acme")
        assert isinstance(account.created_at, datetime) and account.created_at.tzinfo is not None
        assert account.archived_at is None
        with pytest.raises(ValueError, match="time zone"):
            sp.accounts.list(updated_since=datetime(2026, 1, 1))  # naive: refused here
        listed = sp.accounts.list(updated_since=account.created_at)
        assert [a.id for a in listed.data] == [account.id]


async def test_patch_sends_only_what_is_given_and_none_clears(live, actor) -> None:
    with sync_client(live, actor) as sp:
        account = sp.accounts.create(name="Acme", industry="Steel", annual_revenue=Decimal("5"))
        patched = sp.accounts.patch(account.id, industry="Glass")
        assert patched.industry == "Glass" and patched.annual_revenue == Decimal("5")
        cleared = sp.accounts.patch(account.id, annual_revenue=None, industry=NOT_GIVEN)
        assert cleared.annual_revenue is None and cleared.industry == "Glass"


async def test_list_is_one_page_and_list_all_every_row_once_by_cursor(live, actor) -> None:
    sent: list[httpx.URL] = []
    hooks = {"request": [lambda request: sent.append(request.url)]}
    with httpx.Client(event_hooks=hooks) as http, sync_client(live, actor, http_client=http) as sp:
        created = {sp.accounts.create(name=f"Account {i}").id for i in range(7)}
        page = sp.accounts.list(page_size=3, sort_by="name")
        assert isinstance(page, Page) and len(page.data) == 3
        assert page.pagination.total_count == 7 and page.pagination.has_next_page
        sent.clear()
        walked = [a.id for a in sp.accounts.list_all(limit=2, sort_by="name")]
    assert len(walked) == 7 and set(walked) == created
    assert len(sent) == 4  # 2 + 2 + 2 + 1 rows
    assert all(u.params["limit"] == "2" and "page" not in u.params for u in sent)
    assert "cursor" not in sent[0].params and all("cursor" in u.params for u in sent[1:])


async def test_the_async_client_iterates_with_async_for(live, actor) -> None:
    async with async_client(live, actor) as sp:
        created = {(await sp.accounts.create(name=f"Account {i}")).id for i in range(5)}
        walked = [a.id async for a in sp.accounts.list_all(limit=2)]
        assert sorted(walked) == sorted(created)
        page = await sp.accounts.list(limit=2)
        assert page.pagination.next_cursor and page.pagination.total_count is None


async def test_plans_with_milestones_goals_and_tasks(live, actor) -> None:
    with sync_client(live, actor) as sp:
        plan = sp.plans.create(
            name="Mutual plan",
            entity_type="USER",
            entity_id=actor.user.id,
            milestones=[
                models.MilestoneSeed(
                    milestone={"name": "Discovery"},
                    target_date=date(2027, 2, 1),
                    tasks=[models.TaskSeed(title="Kick-off call")],
                ),
                {"milestone": {"name": "Proposal"}, "goals": [{"title": "Pricing agreed"}]},
            ],
            goals=[{"title": "Close", "goalType": "QUANTIFIABLE", "target": 10}],
        )
        assert isinstance(plan, models.Plan)
        assert [m.milestone["name"] for m in plan.milestones] == ["Discovery", "Proposal"]
        assert plan.milestones[0].target_date == date(2027, 2, 1)
        fetched = sp.plans.get(plan.id, include=["milestones", "goals", "tasks"])
        assert isinstance(fetched, models.Plan) and fetched.id == plan.id
        task = fetched.tasks[0]
        updated = sp.plan_tasks.update(plan.id, task.id, title="Kick-off meeting")
        assert updated.title == "Kick-off meeting"
        listed = sp.plans.list(include="milestones")
        assert isinstance(listed, models.PlanListResponse) and listed.data[0].milestones


async def test_conditional_reads_answer_not_modified(live, actor) -> None:
    with sync_client(live, actor) as sp:
        plan = sp.plans.create(name="Plan", entity_type="USER")
        first = sp.plans.get(plan.id)
        assert first._etag and first._request_id
        again = sp.plans.get(plan.id, if_none_match=first._etag)
        assert isinstance(again, NotModified) and again.etag == first._etag
        sp.plans.update(plan.id, name="Renamed")
        changed = sp.plans.get(plan.id, if_none_match=first._etag)
        assert isinstance(changed, models.Plan) and changed.name == "Renamed"
        account = sp.accounts.create(name="Acme")
        tag = sp.accounts.get(account.id)._etag
        assert tag is not None
        assert isinstance(sp.accounts.get(account.id, if_none_match=tag), NotModified)


async def test_with_raw_response_gives_the_http_response_too(live, actor) -> None:
    with sync_client(live, actor) as sp:
        account = sp.accounts.create(name="Acme")
        raw = sp.with_raw_response.accounts.get(account.id)
        assert isinstance(raw, RawResponse) and raw.status_code == 200
        assert isinstance(raw.http_response, httpx.Response)
        assert raw.headers["etag"] and raw.request_id
        assert int(raw.headers["x-ratelimit-limit"]) > 0
        assert raw.parse().id == account.id
        deleted = sp.with_raw_response.accounts.delete(account.id)
        assert deleted.status_code == 204 and deleted.parse() is None
    async with async_client(live, actor) as asp:
        raw_page = await asp.with_raw_response.accounts.list(limit=1)
        assert raw_page.status_code == 200 and raw_page.parse().data == []
