"""The room's e-mails: a share's link, a sign-in code, an invitation. Each is an Engage outbox
message (contract §14: the same transport, DKIM, sender caps and pauses, retries, the
suppression list, a one-click unsubscribe), whose secret — the link or the code — is sealed
(`engage/delivery/sealed.py`): the outbox, the queue and the feed hold a placeholder, only the
e-mail handed to the relay holds the secret. They say nothing a room would not show: the plan's
name, people by name, never a hidden item or a seller's address."""

from __future__ import annotations

import html
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery.queue import is_suppressed, outbox_message
from salesplan.engage.delivery.sealed import seal
from salesplan.kit.scoping import OrgScope, TenantScope
from salesplan.models.engage_delivery import EngageMessage
from salesplan.models.rooms import PlanShare
from salesplan.worker.context import wake_worker

LINK = "[room link]"
CODE = "[sign-in code]"


@dataclass(frozen=True)
class Mail:
    subject: str
    paragraphs: tuple[str, ...]
    action: tuple[str, str] | None = None  # (button text, placeholder of the link)

    def text(self) -> str:
        parts = list(self.paragraphs)
        if self.action is not None:
            parts.append(f"{self.action[0]}: {self.action[1]}")
        return "\n\n".join(parts) + "\n"

    def markup(self) -> str:
        out = "".join(f"<p>{html.escape(p)}</p>" for p in self.paragraphs)
        if self.action is not None:
            label, target = (html.escape(v) for v in self.action)
            out += f'<p><a href="{target}">{label}</a></p>'
        return out


def link_mail(plan_name: str, organization: str, sender: str) -> Mail:
    who = f"{sender} at {organization}" if sender else organization
    return Mail(
        subject=f"{plan_name}: our mutual plan",
        paragraphs=(
            f"{who} shared the plan “{plan_name}” with you.",
            "Open it to see the milestones, the next steps and who owns each. You will be "
            "asked for a code that we e-mail to this address.",
        ),
        action=("Open the plan", LINK),
    )


def invite_mail(plan_name: str, organization: str, inviter: str) -> Mail:
    return Mail(
        subject=f"{inviter} invited you to “{plan_name}”",
        paragraphs=(
            f"{inviter} invited you to the plan “{plan_name}” with {organization}.",
            "Open it to see the milestones and the next steps. You will be asked for a code "
            "that we e-mail to this address.",
        ),
        action=("Open the plan", LINK),
    )


def code_mail(plan_name: str) -> Mail:
    return Mail(
        subject=f"Your sign-in code for “{plan_name}”",
        paragraphs=(
            f"Your code to open “{plan_name}” is {CODE}.",
            "It works for 10 minutes. If you did not ask for it, you can ignore this e-mail.",
        ),
    )


async def suppressed(session: AsyncSession, share: PlanShare) -> bool:
    return await address_suppressed(session, OrgScope(share.organization_id), share.email)


async def address_suppressed(session: AsyncSession, scope: TenantScope, address: str) -> bool:
    """Whether the organization's suppression list holds the address (contract §14)."""
    return await is_suppressed(session, scope, address) is not None


async def queue(
    session: AsyncSession,
    settings: Settings,
    share: PlanShare,
    mail: Mail,
    secrets: dict[str, str],
) -> EngageMessage:
    """Queue `mail` to the share's address with its `secrets` sealed (the caller checked the
    suppression list first); the worker wakes when the transaction commits."""
    message = outbox_message(
        settings,
        organization_id=share.organization_id,
        channel="EMAIL",
        contact_id=share.contact_id,
        to=share.email,
        subject=mail.subject,
        body=mail.text(),
        body_html=mail.markup(),
    )
    message.sealed = seal(settings.signing_key, secrets)
    session.add(message)
    await session.flush()
    await wake_worker(session)
    return message


def reminder_mail(plan_name: str, task_title: str, overdue: bool, due: str) -> Mail:
    when = f"was due {due}" if overdue else f"is due {due}"
    return Mail(
        subject=f"Reminder: “{task_title}” {when}",
        paragraphs=(
            f"“{task_title}” in the plan “{plan_name}” {when}.",
            "Open the plan to mark it done or to leave a comment. You will be asked for a code "
            "that we e-mail to this address.",
        ),
        action=("Open the plan", LINK),
    )


def digest_mail(plan_name: str, lines: list[str], url: str) -> Mail:
    return Mail(
        subject=f"{plan_name}: what your buyers did",
        paragraphs=(f"In the plan “{plan_name}”:", *lines),
        action=("See the plan's room", url),
    )
