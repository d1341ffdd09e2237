"""Opportunities' statements: the generic tenant-scoped ones, with the opportunity's sort and
search columns."""

from __future__ import annotations

from salesplan.kit.repository import Repository, sorts
from salesplan.models.crm import Opportunity


class OpportunityRepository(Repository[Opportunity]):
    model = Opportunity
    sort_columns = sorts(Opportunity, name=Opportunity.name, closeDate=Opportunity.close_date)
    search_columns = (Opportunity.name,)
    conflict_name = "opportunity"
