"""The CSV importer, run as an operator would: through the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.foundation.test_cli import run_cli


@pytest.fixture
async def org_id(empty_database_url: str) -> str:
    if empty_database_url.startswith("postgresql"):
        assert run_cli(empty_database_url, "migrate").returncode == 0
    result = run_cli(empty_database_url, "admin", "create-org", "--name", "Importers")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["id"])


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_rejected(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


async def test_import_accounts_reports_created_and_rejected_rows(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = write_csv(
        tmp_path / "accounts.csv",
        ["Name", "Domain", "CRM ID", "Annual Revenue", "Employee Count", "Notes"],
        [
            ["Acme", "acme.com", "SF-1", "1000.50", "12", "x"],
            ["", "nameless.com", "SF-2", "", "", ""],
            ["Acme Again", "", "SF-1", "", "", ""],
            ["Globex", "", "SF-3", "-5", "", ""],
            ["Initech", "", "", "", "7", ""],
        ],
    )
    result = run_cli(
        empty_database_url, "import", "accounts", str(source), "--org", org_id, "--batch-size", "2"
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["rowsRead"] == 5
    assert summary["created"] == 2
    assert summary["rejected"] == 3
    assert summary["notProcessed"] == 0
    assert summary["ignoredColumns"] == ["Notes"]
    rejected = read_rejected(summary["rejectedFile"])
    assert [r["row"] for r in rejected] == ["2", "3", "4"]
    assert "name" in rejected[0]["reason"]
    assert "crmId" in rejected[1]["reason"]
    assert "annualRevenue" in rejected[2]["reason"]
    assert "rows read" in result.stderr

    again = run_cli(empty_database_url, "import", "accounts", str(source), "--org", org_id)
    assert json.loads(again.stdout)["created"] == 1  # only Initech has no crmId to collide on


async def test_import_contacts_resolves_accounts_by_crm_id(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    accounts = write_csv(tmp_path / "a.csv", ["name", "crmId"], [["Acme", "ACC-1"]])
    assert (
        run_cli(empty_database_url, "import", "accounts", str(accounts), "--org", org_id).returncode
        == 0
    )
    contacts = write_csv(
        tmp_path / "c.csv",
        ["accountCrmId", "firstName", "lastName", "email"],
        [
            ["ACC-1", "Ada", "Lovelace", "ada@example.com"],
            ["ACC-404", "Bob", "Nobody", "bob@example.com"],
            ["ACC-1", "Bad", "Mail", "not-an-email"],
        ],
    )
    result = run_cli(empty_database_url, "import", "contacts", str(contacts), "--org", org_id)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["rowsRead"], summary["created"], summary["rejected"]) == (3, 1, 2)


async def test_import_into_an_unknown_organization_fails_clearly(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = write_csv(tmp_path / "a.csv", ["name"], [["Acme"]])
    result = run_cli(
        empty_database_url,
        "import",
        "accounts",
        str(source),
        "--org",
        "00000000-0000-0000-0000-000000000000",
    )
    assert result.returncode == 1
    assert "Organization not found" in result.stderr


async def test_import_rejects_a_domain_that_is_not_one(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = write_csv(
        tmp_path / "accounts.csv",
        ["name", "domain"],
        [["Acme", "acme.com"], ["Bad", "not a domain!!"], ["Münch", "bücher.example"]],
    )
    result = run_cli(empty_database_url, "import", "accounts", str(source), "--org", org_id)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["created"], summary["rejected"]) == (2, 1)
    rejected = read_rejected(summary["rejectedFile"])
    assert [r["row"] for r in rejected] == ["2"] and "domain" in rejected[0]["reason"]


async def test_the_rejected_rows_file_is_named_as_the_readme_says(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = write_csv(tmp_path / "accounts.csv", ["name", "crmId"], [["", "X-1"]])
    result = run_cli(empty_database_url, "import", "accounts", str(source), "--org", org_id)
    summary = json.loads(result.stdout)
    assert summary["rejectedFile"] == str(tmp_path / "accounts.rejected.csv")
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "`accounts.rejected.csv`" in readme and "FILE.rejected.csv" not in readme


async def test_no_rejected_rows_file_when_nothing_was_rejected(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = write_csv(tmp_path / "accounts.csv", ["name"], [["Acme"], ["Globex"]])
    result = run_cli(empty_database_url, "import", "accounts", str(source), "--org", org_id)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["created"], summary["rejected"], summary["rejectedFile"]) == (2, 0, None)
    assert not (tmp_path / "accounts.rejected.csv").exists()


async def test_a_semicolon_separated_file_gets_a_hint(
    empty_database_url: str, org_id: str, tmp_path: Path
) -> None:
    source = tmp_path / "accounts.csv"
    source.write_text("name;domain\nAcme;acme.com\n")
    result = run_cli(empty_database_url, "import", "accounts", str(source), "--org", org_id)
    assert "separated by ';'" in result.stderr and "commas" in result.stderr
    assert json.loads(result.stdout)["created"] == 0  # nothing guessed: the hint says what to do
