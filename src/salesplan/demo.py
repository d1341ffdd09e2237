"""`salesplan demo`: a demo organization, a user to sign in with, and a fresh API key.

The data is loaded once; running it again only prints a new key, revoking the one printed
before (keys are stored hashed: the old one cannot be shown again, and runs do not pile up
full-scope keys). The password is printed while it is still the demo's. Each domain adds its
part to `DEMO_LOADERS` (accounts, contacts, plans, maps, templates)."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from email.utils import formataddr

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from salesplan import demo_repository as repo
from salesplan.accounts.schemas import AccountIn
from salesplan.accounts.service import create_account
from salesplan.auth.passwords import verify_password
from salesplan.auth.principal import RequestContext
from salesplan.auth.tokens import create_api_key, revoke_api_key
from salesplan.calendar.crypto import encrypt_password
from salesplan.calendar.events import CalendarEventCreated
from salesplan.contacts.schemas import ContactIn
from salesplan.contacts.service import create_contact
from salesplan.engage.delivery.events import ReplyReceived
from salesplan.engage.schemas import CampaignIn, ListIn, TemplateIn
from salesplan.engage.service import create_campaign, create_list, create_template
from salesplan.feed.ingest import Incoming, engage_message_sent, record
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.ids import uuid7
from salesplan.kit.uow import handle_pending
from salesplan.models.calendar import CalendarConnection, CalendarEvent
from salesplan.models.engage_delivery import EngageMessage, EngageReply
from salesplan.models.identity import Organization, User
from salesplan.opportunities.schemas import OpportunityIn
from salesplan.opportunities.service import create_opportunity
from salesplan.organizations.service import add_user, create_organization
from salesplan.plans.schemas import PlanCreate
from salesplan.plans.service import create_plan
from salesplan.relationship_maps.schemas import MapContactUpsert, RelationshipMapIn
from salesplan.relationship_maps.service import create_map, upsert_contact

DEMO_SLUG = "acme-demo"
DEMO_EMAIL = "demo@salesplan.example"
DEMO_PASSWORD = "salesplan-demo"
DEMO_KEY_NAME = "demo"

DemoLoader = Callable[[AsyncSession, Organization, User], Awaitable[None]]
DEMO_LOADERS: list[DemoLoader] = []


@dataclass
class DemoResult:
    organization_id: str
    user_id: str
    email: str
    password: str | None  # None: changed since the demo was loaded
    api_key: str
    created: bool
    revoked_keys: int = 0


async def load_demo(session: AsyncSession) -> DemoResult:
    """Load the demo (once) and print a new key, in `session`'s transaction (the caller
    commits). The domain events the loaders emit are handled here, in that transaction
    (`kit.uow.handle_pending`), so the demo's feed is there whichever way the caller commits."""
    org = await repo.organization_by_slug(session, DEMO_SLUG)
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
        user = await repo.user_by_email(session, DEMO_EMAIL)
    revoked = 0
    for key_id in await repo.live_key_ids(session, user.id, DEMO_KEY_NAME):
        await revoke_api_key(session, user_id=user.id, key_id=key_id)
        revoked += 1
    _, raw = await create_api_key(session, user_id=user.id, name=DEMO_KEY_NAME)
    password = DEMO_PASSWORD if verify_password(user.password_hash, DEMO_PASSWORD) else None
    await handle_pending(session)
    return DemoResult(str(org.id), str(user.id), DEMO_EMAIL, password, raw, created, revoked)


async def _load_crm(session: AsyncSession, org: Organization, user: User) -> None:
    """A few accounts with contacts, an opportunity and a relationship map."""
    ctx = demo_context(org, user)
    people = {
        "Globex": [("Hank", "Scorpio", "CEO", "champion"), ("Frank", "Grimes", "CFO", "blocker")],
        "Initech": [("Bill", "Lumbergh", "VP Engineering", "neutral")],
        "Umbrella": [("Alice", "Abernathy", "Head of Security", "supporter")],
    }
    for name, contacts in people.items():
        account = await create_account(
            session,
            ctx,
            AccountIn.model_validate(
                {"name": name, "domain": f"{name.lower()}.example", "ownerId": str(user.id)}
            ),
        )
        placed = []
        for first, last, title, support in contacts:
            contact = await create_contact(
                session,
                ctx,
                account.id,
                ContactIn.model_validate(
                    {
                        "firstName": first,
                        "lastName": last,
                        "title": title,
                        "email": f"{first.lower()}@{name.lower()}.example",
                    }
                ),
            )
            placed.append((contact, support))
        if name == "Globex":
            await create_opportunity(
                session,
                ctx,
                OpportunityIn.model_validate(
                    {
                        "accountId": str(account.id),
                        "name": "Globex platform rollout",
                        "stage": "Discovery",
                        "amount": 120000,
                        "currency": "USD",
                        "probability": 40,
                        "ownerId": str(user.id),
                    }
                ),
            )
            buyer_map = await create_map(
                session,
                ctx,
                RelationshipMapIn.model_validate(
                    {"entityType": "Account", "entityId": str(account.id)}
                ),
            )
            for contact, support in placed:
                await upsert_contact(
                    await session.connection(),  # in the session's transaction
                    ctx,
                    buyer_map.id,
                    contact.id,
                    MapContactUpsert.model_validate(
                        {"supportStatus": support, "functionalRole": contact.title}
                    ),
                    public_url="",  # the answer is not used here
                )


async def _load_demo_plan(session: AsyncSession, org: Organization, user: User) -> None:
    """One mutual plan on the Globex account that the CRM loader made."""
    ctx = demo_context(org, user)
    account = await repo.account_named(session, ctx, "Globex")
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


async def _load_engage(session: AsyncSession, org: Organization, user: User) -> None:
    """Templates on each channel, a dynamic list and a draft campaign using them."""
    ctx = demo_context(org, user)
    email = await create_template(
        session,
        ctx,
        TemplateIn.model_validate(
            {
                "name": "Intro e-mail",
                "channel": "EMAIL",
                "subject": "{{ account.name }} and Acme, {{ contact.firstName }}",
                "body": "Hi {{ contact.firstName }},\n\nI lead the work with "
                "{{ account.name }} at Acme. Could we talk for 20 minutes next week?\n\n"
                "{{ sender.fullName }}",
            }
        ),
    )
    linkedin = await create_template(
        session,
        ctx,
        TemplateIn.model_validate(
            {
                "name": "LinkedIn follow-up",
                "channel": "LINKEDIN",
                "body": "Hi {{ contact.firstName }}, following up on my e-mail about "
                "{{ account.name }}. Happy to connect.",
            }
        ),
    )
    await create_template(
        session,
        ctx,
        TemplateIn.model_validate(
            {
                "name": "Slack nudge",
                "channel": "SLACK",
                "body": "{{ contact.firstName }}, the pilot notes for {{ account.name }} are ready.",
            }
        ),
    )
    await create_list(
        session,
        ctx,
        ListIn.model_validate(
            {"name": "Contacts with e-mail", "type": "DYNAMIC", "criteria": {"hasEmail": True}}
        ),
    )
    await create_campaign(
        session,
        ctx,
        CampaignIn.model_validate(
            {
                "name": "Q1 outreach",
                "flow": {
                    "steps": [
                        {"channel": "EMAIL", "templateId": str(email.id), "delayMinutes": 0},
                        {
                            "channel": "LINKEDIN",
                            "templateId": str(linkedin.id),
                            "delayMinutes": 2880,
                        },
                    ]
                },
            }
        ),
    )


async def _load_feed(session: AsyncSession, org: Organization, user: User) -> None:
    """Globex's inbox: an e-mail thread with a reply, a Slack thread from the shared channel
    and a meeting, so that the three kinds show together."""
    now = utcnow().replace(microsecond=0)
    hank, frank = "hank@globex.example", "frank@globex.example"
    sent_at = now - timedelta(days=3)
    message = EngageMessage(
        organization_id=org.id,
        channel="EMAIL",
        to_address=hank,
        subject="Globex and Acme, Hank",
        body="Hi Hank,\n\nCould we talk for 20 minutes next week about the rollout?\n\nDana",
        status="sent",
        rfc_message_id=f"<demo-{uuid7()}@salesplan.example>",
        sent_at=sent_at,
        created_at=sent_at,
        replied_at=now - timedelta(days=2, hours=20),
    )
    session.add(message)
    await session.flush()
    # Sent mail enters the feed as the delivery worker records the send.
    sender = formataddr((user.full_name or None, user.email))
    await (await session.connection()).run_sync(engage_message_sent, message, sent_at, sender)
    reply = EngageReply(
        organization_id=org.id,
        message_id=message.id,
        from_address=hank,
        subject="Re: Globex and Acme, Hank",
        text="Hi Dana, Thursday 10:00 works. Frank will join.",
        rfc_message_id=f"<demo-{uuid7()}@globex.example>",
        received_at=now - timedelta(days=2, hours=20),
        created_at=now - timedelta(days=2, hours=20),
    )
    session.add(reply)
    await session.flush()
    emit(session, ReplyReceived(reply.id))  # the feed records the reply (feed/ingest.py)
    # A calendar collection nobody can reach (.invalid), its password sealed with a throwaway
    # key: the meeting is shown as synced; connect a real calendar to sync one.
    connection = CalendarConnection(
        organization_id=org.id,
        user_id=user.id,
        url="https://calendar.invalid/dana/",
        username="dana",
        password_encrypted=encrypt_password(secrets.token_bytes(32), "demo"),
        last_synced_at=now,
    )
    session.add(connection)
    await session.flush()
    start = now.replace(minute=0, second=0) - timedelta(days=1)
    meeting = CalendarEvent(
        organization_id=org.id,
        connection_id=connection.id,
        user_id=user.id,
        href=connection.url + "globex-rollout.ics",
        uid="demo-globex-rollout",
        title="Globex rollout: scoping call",
        description="Agenda: pilot scope, security review, timeline.",
        start_at=start,
        end_at=start + timedelta(hours=1),
        attendees=[
            {"email": hank, "name": "Hank Scorpio", "status": "ACCEPTED"},
            {"email": frank, "name": "Frank Grimes", "status": "TENTATIVE"},
            {"email": DEMO_EMAIL, "name": "Dana Demo", "status": "ACCEPTED"},
        ],
        organizer_email=DEMO_EMAIL,
    )
    session.add(meeting)
    await session.flush()
    emit(session, CalendarEventCreated(org.id, meeting))  # its meeting thread (feed/ingest.py)
    await handle_pending(session)  # the reply's and the meeting's entries, before Slack's
    root = now - timedelta(hours=5)

    def slack(conn_session: Session) -> None:
        conn = conn_session.connection()
        for i, (who, name, text, at) in enumerate(
            [
                (frank, "Frank Grimes", "Is the security questionnaire ready?", root),
                (DEMO_EMAIL, "Dana Demo", "Yes, sending it today.", root + timedelta(hours=1)),
            ]
        ):
            record(
                conn,
                Incoming(
                    organization_id=org.id,
                    kind="slack",
                    thread_key=f"C0GLOBEX:{root.timestamp():.6f}",
                    source_key=f"slack:EvDEMO{i}",
                    direction="outbound" if who == DEMO_EMAIL else "inbound",
                    occurred_at=at,
                    text=text,
                    author_email=who,
                    author_name=name,
                    slack_channel="C0GLOBEX",
                    slack_ts=f"{at.timestamp():.6f}",
                ),
            )

    await session.run_sync(slack)


def demo_context(org: Organization, user: User) -> RequestContext:
    """The demo user acting in the demo organization, as the services expect."""
    return RequestContext.internal(org.id, user.id, "demo")


DEMO_LOADERS.extend([_load_crm, _load_demo_plan, _load_engage, _load_feed])
