"""`salesplan import accounts|contacts FILE.csv --org ID` (the logic is in
salesplan.accounts.importer)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from salesplan.accounts.limits import BATCH_SIZE
from salesplan.cli.support import (
    OrgOpt,
    announce_database,
    emit,
    ensure_migrated,
    err,
    fail,
    parse_uuid,
    run_on_database,
    say,
)

if TYPE_CHECKING:
    from salesplan.accounts.importer import ImportSummary, Kind

import_app = typer.Typer(no_args_is_help=True, help="Import accounts or contacts from CSV.")

FileArg = Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)]
RejectedOpt = Annotated[
    Path | None,
    typer.Option(
        "--rejected",
        metavar="PATH",
        help="Where to write rejected rows (default: beside the file, accounts.csv → "
        "accounts.rejected.csv; none when no row is rejected).",
    ),
]
BatchOpt = Annotated[int, typer.Option("--batch-size", metavar="N", min=1, max=1000)]


def _run(kind: Kind, file: Path, org: str, rejected: Path | None, batch_size: int) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from salesplan.accounts.importer import count_rows, run_import, separator_hint
    from salesplan.config import Settings
    from salesplan.db import create_database, create_engine
    from salesplan.events import handlers
    from salesplan.kit.uow import UnitOfWork

    org_id = parse_uuid(org, "--org")
    settings = Settings()
    ensure_migrated(settings)
    rejected_path = rejected or file.with_name(file.stem + ".rejected.csv")
    total = count_rows(file)
    hint = separator_hint(file)

    async def go() -> ImportSummary:
        engine = create_engine(settings)
        database = create_database(engine, handlers())
        try:
            async with UnitOfWork(database, read_only=True) as uow:
                await uow.reader()  # reached: say which database this is
                announce_database(settings)
            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
            ) as progress:
                task = progress.add_task(f"importing {kind}", total=total)
                return await run_import(
                    database,
                    kind,
                    file,
                    org_id,
                    rejected_path,
                    batch_size=batch_size,
                    on_progress=lambda n: progress.advance(task, n),
                )
        finally:
            await engine.dispose()

    summary = run_on_database(go(), settings)
    table = Table(title=f"import {kind}: {file.name}", show_header=False)
    table.add_row("rows read", str(summary.rows_read))
    table.add_row("created", str(summary.created))
    table.add_row("rejected", str(summary.rejected))
    if summary.not_processed:
        table.add_row("not processed", str(summary.not_processed))
    table.add_row("rejected rows", summary.rejected_file or "(none)")
    if summary.ignored_columns:
        table.add_row("ignored columns", ", ".join(summary.ignored_columns))
    Console(stderr=True).print(table)
    if not sys.stdout.isatty():  # on a terminal the table above is the summary
        emit(summary.as_dict(), f"import {kind}")
    if hint:
        say(f"note: {hint}")  # below the summary, where it is read
    if summary.error:
        fail(summary.error)


@import_app.command("accounts")
def import_accounts(
    file: FileArg, org: OrgOpt, rejected: RejectedOpt = None, batch_size: BatchOpt = BATCH_SIZE
) -> None:
    """Import accounts (columns: name, domain, website, industry, description, crmId, ownerId,
    annualRevenue, employeeCount)."""
    _run("accounts", file, org, rejected, batch_size)


@import_app.command("contacts")
def import_contacts(
    file: FileArg, org: OrgOpt, rejected: RejectedOpt = None, batch_size: BatchOpt = BATCH_SIZE
) -> None:
    """Import contacts (columns: accountId or accountCrmId, firstName, lastName, email, title,
    phone, linkedinUrl, crmId)."""
    _run("contacts", file, org, rejected, batch_size)
