"""Leads' statements: the generic tenant-scoped ones, with the lead's sort and search columns."""

from __future__ import annotations

from salesplan.kit.repository import Repository, sorts
from salesplan.models.crm import Lead


class LeadRepository(Repository[Lead]):
    model = Lead
    sort_columns = sorts(Lead, lastName=Lead.last_name, email=Lead.email)
    search_columns = (Lead.first_name, Lead.last_name, Lead.email, Lead.company)
    conflict_name = "lead"
