"""A plan with something to hide, its buyer, and a buyer's browser without a browser: an
httpx client on the app that keeps cookies and fills in each form's CSRF token."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.engage.delivery.worker import run_delivery
from salesplan.models.crm import Account, Contact
from salesplan.models.engage import EngageSuppression
from salesplan.models.identity import User
from tests.engage_delivery.conftest import SmtpSink, worker_context
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor
from tests.plans.helpers import PLANS

DOMAIN = "buyer.example"
SELLER_EMAIL = "sam.seller@seller.example"
SELLER_NAME = "Sam Seller"
# What the buyer must never see: items the seller hid, their internal notes, their addresses.
SECRETS = (
    "Internal pricing review",  # a hidden milestone
    "Hidden discount approval",  # a task of the hidden milestone
    "Margin floor goal",  # a goal of the hidden milestone
    "Redline the MSA quietly",  # a hidden task
    "Competitive displacement",  # a hidden goal
    "Sub-goal of the hidden goal",  # a goal under the hidden goal
    "Internal: they are price sensitive",  # an internal comment
    "Legal wants this done before they notice.",  # a comment on a hidden task
    SELLER_EMAIL,
)


@dataclass
class Deal:
    """A seller, an account on DOMAIN with two contacts, and a plan on it."""

    actor: Actor
    account: Account
    ada: Contact  # the champion the plan is shared with
    grace: Contact  # another buyer
    plan: dict[str, Any]
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def plan_id(self) -> str:
        return str(self.plan["id"])


async def seller_named(db: AsyncSession, actor: Actor) -> None:
    user = await db.get(User, actor.user.id)
    assert user is not None
    user.full_name = SELLER_NAME
    user.email = SELLER_EMAIL
    await db.commit()


async def make_deal(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor, *, hidden: bool = True
) -> Deal:
    """A plan with two milestones (the second hidden), goals, tasks of every kind (the buyer's,
    the seller's, unassigned, hidden), comments (one internal), and its room settings."""
    await seller_named(db, actor)
    account, group = await make_account(db, actor.org.id, "Buyer Inc", domain=DOMAIN)
    ada = await make_contact(db, account, "Ada", "Lovelace", email=f"ada@{DOMAIN}")
    grace = await make_contact(db, account, "Grace", "Hopper", email=f"grace@{DOMAIN}")
    seller = str(actor.user.id)
    body = {
        "name": "Buyer Inc rollout",
        "description": "What we do together to go live by March.",
        "entityType": "BUYING_GROUP",
        "entityId": str(group.id),
        "milestones": [
            {
                "milestone": {"name": "Technical validation"},
                "targetDate": "2031-02-01",
                "prospectOwnerIds": [str(ada.id)],
                "goals": [{"title": "Security review passed", "goalType": "MILESTONE_BASED"}],
                "tasks": [
                    {"title": "Send the security questionnaire", "assignedToId": str(ada.id),
                     "targetDate": "2020-01-15"},
                    {"title": "Run the pilot", "assignedToId": seller, "targetDate": "2031-01-20"},
                    {"title": "Agree on success criteria"},
                    {"title": "Redline the MSA quietly", "assignedToId": seller},
                ],
            },
            {
                "milestone": {"name": "Internal pricing review"},
                "goals": [{"title": "Margin floor goal", "goalType": "QUANTIFIABLE"}],
                "tasks": [{"title": "Hidden discount approval", "assignedToId": seller,
                           "targetDate": "2031-01-10"}],
            },
        ],
        "goals": [
            {"title": "Go live by March", "goalType": "QUANTIFIABLE", "target": 10,
             "actualValue": 4},
            {"title": "Competitive displacement", "goalType": "QUANTIFIABLE",
             "childGoals": [{"title": "Sub-goal of the hidden goal", "goalType": "QUANTIFIABLE"}]},
        ],
    }  # fmt: skip
    resp = await client.post(PLANS, json=body, headers=actor.in_org())
    assert resp.status_code == 201, resp.text
    plan = resp.json()
    first, second = plan["milestones"]
    tasks = {t["title"]: t["id"] for t in plan["tasks"]}
    goals = {g["title"]: g["id"] for g in plan["goals"]}
    deal = Deal(actor, account, ada, grace, plan)
    deal.ids = {
        "shown_milestone": first["id"],
        "hidden_milestone": second["id"],
        "buyer_task": tasks["Send the security questionnaire"],
        "seller_task": tasks["Run the pilot"],
        "open_task": tasks["Agree on success criteria"],
        "hidden_task": tasks["Redline the MSA quietly"],
        "hidden_milestone_task": tasks["Hidden discount approval"],
        "hidden_goal": goals["Competitive displacement"],
    }
    if hidden:
        room = {
            "hiddenMilestoneIds": [second["id"]],
            "hiddenGoalIds": [goals["Competitive displacement"]],
            "hiddenTaskIds": [tasks["Redline the MSA quietly"]],
            "welcomeMessage": "Welcome, Ada! Here is where we stand.",
        }
        resp = await client.put(f"{PLANS}/{deal.plan_id}/room", json=room, headers=actor.in_org())
        assert resp.status_code == 200, resp.text
    for task, text, internal in (
        ("buyer_task", "Questionnaire attached to the kickoff notes.", False),
        ("buyer_task", "Internal: they are price sensitive", True),
        ("hidden_task", "Legal wants this done before they notice.", False),
    ):
        resp = await client.post(
            f"{PLANS}/{deal.plan_id}/tasks/{deal.ids[task]}/comments",
            json={"body": text, "internal": internal},
            headers=actor.in_org(),
        )
        assert resp.status_code == 201, resp.text
    return deal


async def make_share(client: httpx.AsyncClient, deal: Deal, **body: Any) -> dict[str, Any]:
    body.setdefault("role", "collaborator")
    if "email" not in body:
        body.setdefault("contactId", str(deal.ada.id))
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/shares", json=body, headers=deal.actor.in_org()
    )
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def suppress(db: AsyncSession, actor: Actor, address: str) -> None:
    """The organization's suppression list holds the address (contract §14)."""
    db.add(EngageSuppression(organization_id=actor.org.id, email=address, reason="unsubscribed"))
    await db.commit()


def token_of(url: str) -> str:
    return url.rsplit("/rooms/", 1)[1]


_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found is not None, "no CSRF token in the page"
    return found.group(1)


async def deliver(app: Any, smtp: SmtpSink) -> int:
    return await run_delivery(worker_context(app, smtp))


def mail_text(message: Any) -> str:
    return str(message.get_body(("plain",)).get_content())


def code_in(smtp: SmtpSink) -> str:
    """The code of the last code e-mail received (a batch's e-mails arrive in any order:
    deliver right after asking)."""
    mails = [m for m in smtp.received if str(m["Subject"]).startswith("Your sign-in code")]
    assert mails, "no code e-mail"
    found = re.search(r"\b(\d{6})\b", mail_text(mails[-1]))
    assert found is not None, mail_text(mails[-1])
    return found.group(1)


def link_in(message: Any) -> str:
    found = re.search(r"(http://testserver/rooms/[A-Za-z0-9_-]+)", mail_text(message))
    assert found is not None
    return found.group(1)


class Buyer:
    """A buyer's browser: cookies kept, forms posted with the page's CSRF token."""

    def __init__(self, app: Any, token: str, origin: str = "http://testserver") -> None:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        self.http = httpx.AsyncClient(transport=transport, base_url=origin)
        self.token = token
        self.page = ""

    async def __aenter__(self) -> Buyer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    @property
    def home(self) -> str:
        return f"/rooms/{self.token}"

    async def get(self, path: str = "") -> httpx.Response:
        resp = await self.http.get(self.home + path)
        self.page = resp.text
        return resp

    async def view(self) -> httpx.Response:
        """What a browser does with the room: GET the page, then its script posts the view
        form (`room-view.js`). Answers the page."""
        page = await self.get()
        if 'id="room-view"' in page.text:
            beacon = await self.http.post(
                self.home + "/views", data={"csrf_token": csrf_of(page.text)}
            )
            assert beacon.status_code == 204, beacon.text
        return page

    async def post(self, path: str, data: dict[str, str] | None = None) -> httpx.Response:
        if "csrf_token" not in self.page:
            await self.get()
        form = {"csrf_token": csrf_of(self.page), **(data or {})}
        resp = await self.http.post(self.home + path, data=form)
        if resp.status_code == 303:
            location = resp.headers["location"]
            resp = await self.http.get(location.split("#", 1)[0])
        self.page = resp.text
        return resp

    async def sign_in(self, app: Any, smtp: SmtpSink) -> httpx.Response:
        await self.get()
        resp = await self.post("/code")
        assert resp.status_code == 200, resp.text
        await deliver(app, smtp)
        resp = await self.post("/sign-in", {"code": code_in(smtp)})
        assert resp.status_code == 200, resp.text
        assert "Sign out" in resp.text
        return resp


def new_id() -> str:
    return str(uuid.uuid4())
