"""`salesplan demo`: a demo organization, a user to sign in with, and a fresh API key.

The data is loaded once; running it again only prints a new key. Each domain adds its part to
`DEMO_LOADERS` (accounts, contacts, plans, maps, templates)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.tokens import create_api_key
from salesplan.models.identity import Organization, User
from salesplan.organizations.service import add_user, create_organization

DEMO_SLUG = "acme-demo"
DEMO_EMAIL = "demo@salesplan.example"
DEMO_PASSWORD = "salesplan-demo"

DemoLoader = Callable[[AsyncSession, Organization, User], Awaitable[None]]
DEMO_LOADERS: list[DemoLoader] = []


@dataclass
class DemoResult:
    organization_id: str
    email: str
    password: str
    api_key: str
    created: bool


async def load_demo(session: AsyncSession) -> DemoResult:
    org = (
        await session.execute(select(Organization).where(Organization.slug == DEMO_SLUG))
    ).scalar_one_or_none()
    created = org is None
    if org is None:
        org = await create_organization(session, name="Acme Demo")
        org.slug = DEMO_SLUG
        user = await add_user(
            session,
            organization_id=org.id,
            email=DEMO_EMAIL,
            password=DEMO_PASSWORD,
            role="admin",
            full_name="Dana Demo",
        )
        for loader in DEMO_LOADERS:
            await loader(session, org, user)
    else:
        user = (await session.execute(select(User).where(User.email == DEMO_EMAIL))).scalar_one()
    _, raw = await create_api_key(session, user_id=user.id, name="demo")
    return DemoResult(str(org.id), DEMO_EMAIL, DEMO_PASSWORD, raw, created)


async def _load_demo_plan(session: AsyncSession, org: Organization, user: User) -> None:
    """A demo account with its default buying group and one mutual plan on it."""
    from salesplan.auth.principal import Principal, RequestContext
    from salesplan.models.crm import Account, BuyingGroup, default_buying_group_name
    from salesplan.plans.schemas import PlanCreate
    from salesplan.plans.service import create_plan

    account = Account(organization_id=org.id, name="Globex", domain="globex.example")
    session.add(account)
    await session.flush()
    group = BuyingGroup(
        organization_id=org.id,
        account_id=account.id,
        name=default_buying_group_name(account.name),
        is_default=True,
    )
    session.add(group)
    await session.flush()
    ctx = RequestContext(
        Principal(
            token_id=user.id,
            token_kind="api_key",
            scopes=frozenset(),
            organization_ids=frozenset({org.id}),
            user_id=user.id,
        ),
        org.id,
    )
    body = PlanCreate.model_validate(
        {
            "name": "Globex mutual success plan",
            "description": "From evaluation to rollout.",
            "entityType": "ACCOUNT",
            "entityId": str(account.id),
            "milestones": [
                {
                    "milestone": {"name": "Discovery"},
                    "status": "completed",
                    "tasks": [{"title": "Kickoff call", "completed": True}],
                },
                {
                    "milestone": {"name": "Technical evaluation"},
                    "status": "in_progress",
                    "goals": [{"title": "Pilot signed off", "goalType": "MILESTONE_BASED"}],
                    "tasks": [
                        {"title": "Security review", "completed": True},
                        {"title": "Pilot with 20 users", "assignedToId": str(user.id)},
                    ],
                },
                {"milestone": {"name": "Rollout"}},
            ],
            "goals": [
                {
                    "title": "Annual contract value",
                    "goalType": "QUANTIFIABLE",
                    "target": 250000,
                    "actualValue": 100000,
                    "unitType": "DOLLAR",
                    "childGoals": [{"title": "EMEA seats", "target": 200, "actualValue": 50}],
                }
            ],
        }
    )
    await create_plan(session, ctx, body)


DEMO_LOADERS.append(_load_demo_plan)
