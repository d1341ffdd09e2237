"""Engage content and audiences, by resource: `templates`, `drafts`, `lists`, `campaigns`
(with enrollments). This module re-exports their operations for callers that take the domain
as one service."""

from __future__ import annotations

from salesplan.engage.campaigns import (
    TRANSITIONS,
    bulk_create_campaigns,
    campaign_status,
    create_campaign,
    enroll,
    get_campaign,
    get_job,
    list_campaigns,
    update_campaign,
)
from salesplan.engage.drafts import create_draft, delete_draft, get_draft, list_drafts
from salesplan.engage.lists import (
    add_members,
    archive_list,
    create_list,
    get_list,
    list_lists,
    list_members,
    remove_member,
    update_list,
)
from salesplan.engage.templates import (
    archive_template,
    create_template,
    get_template,
    list_templates,
    preview_template,
    render_for_contact,
    sendable_content,
    update_template,
)

__all__ = [
    "TRANSITIONS",
    "add_members",
    "archive_list",
    "archive_template",
    "bulk_create_campaigns",
    "campaign_status",
    "create_campaign",
    "create_draft",
    "create_list",
    "create_template",
    "delete_draft",
    "enroll",
    "get_campaign",
    "get_draft",
    "get_job",
    "get_list",
    "get_template",
    "list_campaigns",
    "list_drafts",
    "list_lists",
    "list_members",
    "list_templates",
    "preview_template",
    "remove_member",
    "render_for_contact",
    "sendable_content",
    "update_campaign",
    "update_list",
    "update_template",
]
