"""CSV import for people moving from another CRM: `salesplan import accounts|contacts FILE`.

Rows go through the same bulk path as `bulkCreateAccounts`, one transaction per batch, so that a
batch is either in or out. Every row read ends up counted as created or rejected (with its reason
in the rejected-rows file); if the run stops early, the summary says how many rows were not
processed. Nothing half-imported is hidden."""

from __future__ import annotations

import contextlib
import csv
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from salesplan.accounts.limits import BATCH_SIZE
from salesplan.accounts.service import bulk_create_accounts
from salesplan.auth.principal import RequestContext
from salesplan.contacts.service import bulk_create_contacts
from salesplan.errors import NotFound
from salesplan.kit.uow import Database, UnitOfWork
from salesplan.models.identity import Organization

Kind = Literal["accounts", "contacts"]

_FIELDS: dict[Kind, tuple[str, ...]] = {
    "accounts": (
        "name",
        "domain",
        "website",
        "industry",
        "description",
        "crmId",
        "ownerId",
        "annualRevenue",
        "employeeCount",
    ),
    "contacts": (
        "accountId",
        "accountCrmId",
        "firstName",
        "lastName",
        "email",
        "title",
        "phone",
        "linkedinUrl",
        "crmId",
        "timeZone",
    ),
}


def _key(header: str) -> str:
    return re.sub(r"[^a-z0-9]", "", header.lower())


def column_map(kind: Kind, headers: list[str]) -> tuple[dict[str, str], list[str]]:
    """CSV header → API field, accepting `crmId`, `crm_id`, `CRM ID`…; and the ignored ones."""
    known = {_key(f): f for f in _FIELDS[kind]}
    mapping: dict[str, str] = {}
    ignored: list[str] = []
    for header in headers:
        target = known.get(_key(header))
        if target is None:
            ignored.append(header)
        else:
            mapping[header] = target
    return mapping, ignored


@dataclass
class ImportSummary:
    kind: Kind
    rows_read: int = 0
    created: int = 0
    rejected: int = 0
    not_processed: int = 0
    rejected_file: str | None = None
    ignored_columns: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rowsRead": self.rows_read,
            "created": self.created,
            "rejected": self.rejected,
            "notProcessed": self.not_processed,
            "rejectedFile": self.rejected_file,
            "ignoredColumns": self.ignored_columns,
            "error": self.error,
        }


def separator_hint(path: Path) -> str | None:
    """A file whose header is one column holding `;` (a spreadsheet's export in locales that
    write decimal commas): what to do, since the importer reads comma-separated files."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        header = fh.readline(64 * 1024)
    if "," in header or ";" not in header:
        return None
    return (
        "the file looks separated by ';': the importer reads CSV separated by commas "
        "(export it again as comma-separated CSV, or replace the ';' separators)."
    )


def count_rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return sum(1 for _ in csv.DictReader(fh))


def _batches(reader: csv.DictReader[str], size: int) -> Iterator[list[dict[str, str]]]:
    batch: list[dict[str, str]] = []
    for row in reader:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _reason(error: dict[str, Any]) -> str:
    details = error.get("details") or {}
    errors = details.get("errors")
    if errors:
        parts = []
        for err in errors:
            loc = [str(p) for p in err.get("location", []) if p not in ("body", "accounts")]
            loc = [p for p in loc if not p.isdigit()]
            parts.append(f"{'.'.join(loc) or 'row'}: {err.get('message')}")
        return "; ".join(parts)
    reason = str(error.get("message", "rejected"))
    if details.get("field"):
        reason += f" ({details['field']})"
    return reason


async def run_import(
    database: Database,
    kind: Kind,
    path: Path,
    organization_id: uuid.UUID,
    rejected_path: Path,
    *,
    batch_size: int = BATCH_SIZE,
    on_progress: Callable[[int], None] = lambda n: None,
) -> ImportSummary:
    summary = ImportSummary(kind=kind)
    async with UnitOfWork(database, read_only=True) as uow:
        if await (await uow.session()).get(Organization, organization_id) is None:
            raise NotFound("Organization not found.", details={"id": str(organization_id)})
    # The importer acts as the organization itself, not as a token.
    ctx = RequestContext.internal(organization_id, request_id="cli-import")
    create = bulk_create_accounts if kind == "accounts" else bulk_create_contacts

    with path.open(newline="", encoding="utf-8-sig") as fh, contextlib.ExitStack() as files:
        reader = csv.DictReader(fh)
        headers = list(reader.fieldnames or [])
        mapping, summary.ignored_columns = column_map(kind, headers)
        out: list[TextIO] = []  # the rejected-rows file, made at the first rejected row

        def reject(row: list[object]) -> None:
            if not out:
                out.append(
                    files.enter_context(rejected_path.open("w", newline="", encoding="utf-8"))
                )
                summary.rejected_file = str(rejected_path)
                csv.writer(out[0]).writerow(["row", *headers, "reason"])
            csv.writer(out[0]).writerow(row)

        line = 0
        for batch in _batches(reader, batch_size):
            first_line = line
            line += len(batch)
            summary.rows_read += len(batch)
            rows = [
                {mapping[h]: v.strip() for h, v in raw.items() if h in mapping and v and v.strip()}
                for raw in batch
            ]
            try:
                async with UnitOfWork(database) as uow:  # a batch a transaction
                    result = await create(await uow.session(), ctx, rows)
            except Exception as exc:  # the batch is rolled back: say so, stop
                summary.not_processed = summary.rows_read - summary.created - summary.rejected
                summary.error = f"batch starting at row {first_line + 1} failed: {exc}"
                for _ in reader:
                    summary.rows_read += 1
                    summary.not_processed += 1
                return summary
            for res in result["results"]:
                if res["status"] != 201:
                    raw = batch[res["index"]]
                    reject(
                        [
                            first_line + res["index"] + 1,
                            *[raw.get(h, "") for h in headers],
                            _reason(res["error"]),
                        ]
                    )
            summary.created += result["created"]
            summary.rejected += result["failed"]
            on_progress(len(batch))
    return summary


def summary_json(summary: ImportSummary) -> str:
    return json.dumps(summary.as_dict())
