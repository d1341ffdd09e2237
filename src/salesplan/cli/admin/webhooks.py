"""`salesplan admin webhooks list|create|delete|rotate`: an organization's outbound webhook
endpoints (contract §13)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from salesplan.cli.support import OrgOpt, emit, emit_rows, fail, parse_uuid, run_in_session

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

webhooks = typer.Typer(no_args_is_help=True, help="Outbound webhook endpoints of an organization.")
EndpointOpt = Annotated[str, typer.Option("--id", metavar="ENDPOINT_ID", help="The endpoint's id.")]


def _endpoint_row(endpoint: object) -> dict[str, object]:
    from salesplan.webhooks.schemas import EndpointOut

    return EndpointOut.model_validate(endpoint).model_dump(mode="json", by_alias=True)


@webhooks.command("list")
def webhooks_list(org: OrgOpt) -> None:
    """List the organization's endpoints (never their secrets)."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.service import all_endpoints

    scope = RequestContext.internal(parse_uuid(org, "--org"))

    async def go(session: AsyncSession) -> list[dict[str, object]]:
        return [_endpoint_row(e) for e in await all_endpoints(session, scope)]

    emit_rows(run_in_session(go), "webhook endpoints")


@webhooks.command("create")
def webhooks_create(
    org: OrgOpt,
    url: Annotated[str, typer.Option("--url", metavar="URL", help="https address to POST to.")],
    event_type: Annotated[
        list[str] | None,
        typer.Option(
            "--event-type",
            metavar="TYPE",
            help="Repeat (account.created, contact.*…); all when omitted.",
        ),
    ] = None,
    description: Annotated[str | None, typer.Option("--description", metavar="TEXT")] = None,
) -> None:
    """Create an endpoint; prints it with its signing secret (shown this once)."""
    from salesplan.auth.principal import RequestContext
    from salesplan.config import Settings
    from salesplan.webhooks.schemas import EndpointIn
    from salesplan.webhooks.service import new_endpoint

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    settings = Settings()
    try:
        body = EndpointIn.model_validate(
            {"url": url, "description": description, "eventTypes": event_type or []}
        )
    except ValueError as exc:  # pydantic's ValidationError
        fail(f"invalid endpoint: {exc.errors()[0]['msg'] if hasattr(exc, 'errors') else exc}")
        raise

    async def go(session: AsyncSession) -> dict[str, object]:
        endpoint, secret = await new_endpoint(session, settings, scope, body)
        return _endpoint_row(endpoint) | {"secret": secret}

    emit(run_in_session(go, settings), "webhook endpoint")


@webhooks.command("delete")
def webhooks_delete(org: OrgOpt, endpoint_id: EndpointOpt) -> None:
    """Delete an endpoint permanently, with its pending deliveries."""
    from salesplan.auth.principal import RequestContext
    from salesplan.webhooks.service import remove_endpoint

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    ident = parse_uuid(endpoint_id, "--id")

    async def go(session: AsyncSession) -> dict[str, object]:
        await remove_endpoint(session, scope, ident)
        return {"id": str(ident), "deleted": True}

    emit(run_in_session(go), "webhook endpoint deleted")


@webhooks.command("rotate")
def webhooks_rotate(org: OrgOpt, endpoint_id: EndpointOpt) -> None:
    """A new signing secret (shown this once); the old one keeps signing for 24 h."""
    from salesplan.auth.principal import RequestContext
    from salesplan.config import Settings
    from salesplan.webhooks.service import new_secret

    scope = RequestContext.internal(parse_uuid(org, "--org"))
    ident = parse_uuid(endpoint_id, "--id")
    settings = Settings()

    async def go(session: AsyncSession) -> dict[str, object]:
        endpoint, secret = await new_secret(session, settings, scope, ident)
        return _endpoint_row(endpoint) | {"secret": secret}

    emit(run_in_session(go, settings), "webhook endpoint")
