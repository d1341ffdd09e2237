"""Opportunities' statements: the generic tenant-scoped ones, with the opportunity's sort and
search columns."""

from __future__ import annotations

from salesplan.kit.repository import Repository
from salesplan.models.crm import Opportunity


class OpportunityRepository(Repository[Opportunity]):
    model = Opportunity
    sort_columns = {
        "createdAt": Opportunity.created_at,
        "updatedAt": Opportunity.updated_at,
        "name": Opportunity.name,
        "closeDate": Opportunity.close_date,
    }
    search_columns = (Opportunity.name,)
    conflict_name = "opportunity"
