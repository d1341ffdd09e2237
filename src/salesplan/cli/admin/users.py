"""`salesplan admin create-org|create-user|list-users|set-password`: organizations, users and
their passwords."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Annotated

import typer

from salesplan.cli.support import (
    UserOpt,
    ask_password,
    emit,
    emit_rows,
    fail,
    parse_uuid,
    run_in_session,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

MIN_PASSWORD = 12  # NIST SP 800-63B: length, no composition rules


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        fail(f"the password must be at least {MIN_PASSWORD} characters (a passphrase is fine).")


def create_org(
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="Organization name.")],
) -> None:
    """Create an organization; prints {"id": …}."""
    from salesplan.organizations.service import create_organization

    async def go(session: AsyncSession) -> dict[str, object]:
        org = await create_organization(session, name=name)
        return {"id": str(org.id), "name": org.name, "slug": org.slug}

    emit(run_in_session(go), "organization")


def create_user(
    org: Annotated[str, typer.Option("--org", metavar="ORG_ID", help="Organization id.")],
    email: Annotated[str, typer.Option("--email", metavar="EMAIL")],
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            metavar="PASSWORD",
            help=f"At least {MIN_PASSWORD} characters; needed for a new user.",
        ),
    ] = None,
    role: Annotated[
        str, typer.Option("--role", metavar="ROLE", help="admin, member or consultant.")
    ] = "member",
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="Full name.")] = None,
) -> None:
    """Add a user (or a membership of an existing user); prints {"id": …}."""
    from salesplan.organizations.service import add_user

    org_id = parse_uuid(org, "--org")
    if password is not None:
        check_password(password)

    async def go(session: AsyncSession) -> dict[str, object]:
        user = await add_user(
            session,
            organization_id=org_id,
            email=email,
            password=password,
            role=role,
            full_name=name,
        )
        return {"id": str(user.id), "email": user.email, "role": role}

    emit(run_in_session(go), "user")


def list_users(
    org: Annotated[
        str | None, typer.Option("--org", metavar="ORG_ID", help="Only this organization.")
    ] = None,
) -> None:
    """List users with their organizations and roles."""
    from salesplan.organizations.repository import users_with_roles

    org_id = parse_uuid(org, "--org") if org else None

    async def go(session: AsyncSession) -> list[dict[str, object]]:
        users: dict[uuid.UUID, dict[str, object]] = {}
        roles: dict[uuid.UUID, list[str]] = {}
        for user, organization_id, role in await users_with_roles(session, org_id):
            if user.id not in users:
                held = roles[user.id] = []
                users[user.id] = {
                    "id": str(user.id),
                    "email": user.email,
                    "name": user.full_name,
                    "roles": held,
                }
            if organization_id is not None:
                roles[user.id].append(f"{organization_id}:{role}")
        return list(users.values())

    emit_rows(run_in_session(go), "users")


def set_password(
    user: UserOpt,
    password: Annotated[
        str | None,
        typer.Option(
            "--password",
            metavar="PASSWORD",
            help=f"At least {MIN_PASSWORD} characters; asked for when omitted (twice on a "
            "terminal, one line when piped).",
        ),
    ] = None,
) -> None:
    """Set a user's password; the user's browser sessions are signed out."""
    from salesplan.auth.passwords import hash_password
    from salesplan.auth.repository import sign_out_everywhere
    from salesplan.errors import NotFound
    from salesplan.organizations.repository import user_by_id

    user_id = parse_uuid(user, "--user")
    if password is not None:
        check_password(password)

    async def known(session: AsyncSession) -> None:
        if await user_by_id(session, user_id) is None:
            raise NotFound("User not found.", details={"id": str(user_id)})

    if password is None:
        run_in_session(known)  # an unknown user is said before the password is asked for
        password = ask_password()
        check_password(password)
    new_password = password

    async def go(session: AsyncSession) -> dict[str, object]:
        row = await user_by_id(session, user_id)
        if row is None:
            raise NotFound("User not found.", details={"id": str(user_id)})
        row.password_hash = hash_password(new_password)
        await sign_out_everywhere(session, user_id)
        return {"id": str(row.id), "email": row.email, "passwordChanged": True}

    emit(run_in_session(go), "password set")
