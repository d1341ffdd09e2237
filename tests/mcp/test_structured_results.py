"""Structured results (contract §9, issue 33 item 2), through the official MCP client: every read
tool publishes an object `outputSchema` (its REST 200 response as the OpenAPI document gives it,
standalone) and answers `structuredContent` that validates against it on real data, with the same
JSON as a text block; a read tool's error keeps the REST ErrorEnvelope as text, without
structured content that would not validate; `tools/list` is in a deterministic order."""

from __future__ import annotations

import json
import uuid
from typing import Any

from jsonschema import Draft202012Validator

from salesplan.demo import load_demo
from salesplan.engage.delivery.inbound import suppress
from salesplan.models.rooms import PlanActivity, PlanShare
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import TEST_TOOL, connect, error, rest, rest_body

ID = "00000000-0000-7000-8000-000000000000"


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


async def _seeded(mcp: Any, app: Any) -> tuple[str, dict[str, str]]:
    """The demo organization (accounts, contacts, an opportunity, a relationship map, a plan,
    templates, a list, a campaign, a sent message with its reply, a meeting, a Slack thread),
    plus a draft, an enrollment job and the meeting's artifacts; its key and the ids a read
    tool takes."""
    async with app.state.sessionmaker() as session:
        demo = await load_demo(session)
        await suppress(
            session, uuid.UUID(demo.organization_id), "Opt Out <optout@example.com>", "manual"
        )
        await session.commit()
    key = demo.api_key

    async def first(path: str, **match: str) -> dict[str, Any]:
        items = (await rest_body(mcp, key, path))["data"]
        found = [i for i in items if all(i.get(k) == v for k, v in match.items())]
        assert found, (path, match, items)
        item: dict[str, Any] = found[0]
        return item

    globex = await first("/accounts", name="Globex")
    contact = await first(f"/accounts/{globex['id']}/contacts")
    campaign = await first("/engage/campaigns")
    inbox = (await rest_body(mcp, key, f"/accounts/{globex['id']}/inbox"))["data"]
    event = await first("/calendar/events")
    draft = await rest(
        mcp, key, "POST", "/engage/drafts", json={"channel": "EMAIL", "subject": "Hi", "body": "Hi"}
    )
    assert draft.status_code == 201, draft.text
    job = await rest(
        mcp,
        key,
        "POST",
        f"/engage/campaigns/{campaign['id']}/enrollments",
        json={"contactIds": [contact["id"]]},
    )
    assert job.status_code == 202, job.text
    artifacts = await rest(
        mcp,
        key,
        "PUT",
        f"/calendar/events/{event['id']}/artifacts",
        json={
            "summary": "Scope agreed.",
            "actionItems": [{"text": "Send the security questionnaire"}],
            "transcript": {"segments": [{"speaker": "Hank", "startSeconds": 0, "text": "Hi"}]},
        },
    )
    assert artifacts.status_code == 200, artifacts.text
    lead = await rest(mcp, key, "POST", "/leads", json={"firstName": "Lin", "company": "Initech"})
    assert lead.status_code == 201, lead.text
    plan_id = (await first("/plans"))["id"]
    task_id = (await rest_body(mcp, key, f"/plans/{plan_id}"))["tasks"][0]["id"]
    comment = await rest(
        mcp, key, "POST", f"/plans/{plan_id}/tasks/{task_id}/comments", json={"body": "Noted."}
    )
    assert comment.status_code == 201, comment.text
    async with app.state.sessionmaker() as session:  # a buyer in the plan's room
        org, plan = uuid.UUID(demo.organization_id), uuid.UUID(plan_id)
        share = PlanShare(
            organization_id=org,
            plan_id=plan,
            contact_id=uuid.UUID(contact["id"]),
            email="buyer@example.com",
            role="viewer",
        )
        session.add(share)
        await session.flush()
        session.add(
            PlanActivity(
                organization_id=org,
                plan_id=plan,
                type="viewed",
                share_id=share.id,
                contact_id=share.contact_id,
            )
        )
        await session.commit()
    ids = {
        "organizationId": demo.organization_id,
        "accountId": globex["id"],
        "contactId": contact["id"],
        "opportunityId": (await first("/opportunities"))["id"],
        "buyerMapId": (await first("/relationship-maps"))["id"],
        "planId": plan_id,
        "taskId": task_id,
        "templateId": (await first("/engage/templates"))["id"],
        "draftId": draft.json()["id"],
        "listId": (await first("/engage/lists"))["id"],
        "campaignId": campaign["id"],
        "jobId": job.json()["job"]["id"],
        "messageId": (await first("/engage/queue"))["id"],
        "replyId": (await first("/engage/replies"))["id"],
        "eventId": event["id"],
        "emailThreadId": next(i["id"] for i in inbox if i["type"] == "email"),
        "slackThreadId": next(i["id"] for i in inbox if i["type"] == "slack"),
    }
    return key, ids


def _calls(ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Every read tool with arguments that reach seeded data."""
    one = {name: {name: ids[name]} for name in ids}
    return {
        "getMeta": {},
        "listOrganizations": {},
        "getOrganization": one["organizationId"],
        "listOrganizationUsers": one["organizationId"],
        "listPlans": {},
        "getPlan": one["planId"],
        "listMyTasks": {},
        "listAccounts": {"limit": 2},  # cursor mode: a nextCursor in the pagination
        "getAccount": one["accountId"],
        "listAccountBuyingGroups": one["accountId"],
        "listBuyingGroups": {},
        "listAccountContacts": one["accountId"],
        "listContacts": {"limit": 2},
        "listLeads": {"updatedSince": "2000-01-01T00:00:00Z"},
        "getContact": one["contactId"],
        "listOpportunities": {},
        "getOpportunity": one["opportunityId"],
        "listRelationshipMaps": {},
        "getRelationshipMap": one["buyerMapId"],
        "listEngageTemplates": {"page": 1, "pageSize": 2},  # page mode
        "getEngageTemplate": one["templateId"],
        "listEngageDrafts": {},
        "getEngageDraft": one["draftId"],
        "listEngageLists": {},
        "getEngageList": one["listId"],
        "listEngageListMembers": one["listId"],
        "listEngageCampaigns": {},
        "getEngageCampaign": one["campaignId"],
        "getEngageCampaignStatus": one["campaignId"],
        "getEngageEnrollmentJob": one["jobId"],
        "listEngageQueue": {},
        "getEngageQueueItem": one["messageId"],
        "listEngageReplies": {},
        "getEngageReply": one["replyId"],
        "getEngageAnalytics": {},
        "listEngageSuppressions": {"address": "optout@example.com"},
        "listCalendarEvents": {},
        "getCalendarEvent": one["eventId"],
        "getCalendarEventSummary": one["eventId"],
        "getCalendarEventActionItems": one["eventId"],
        "getCalendarEventTranscript": one["eventId"],
        "getAccountInbox": one["accountId"],
        "getAccountInboxThreadMessages": one["accountId"] | {"threadId": ids["emailThreadId"]},
        "getAccountInboxSlackThread": one["accountId"] | {"threadId": ids["slackThreadId"]},
        "getCommunicationAnalytics": {},
        "listNeedsAttention": {},
        "listPlanShares": one["planId"],
        "listPlanActivity": one["planId"],
        "getPlanEngagement": one["planId"],
        "listPlanTaskComments": one["planId"] | one["taskId"],
    }


async def test_every_read_tool_answers_what_its_output_schema_says(mcp, app) -> None:
    key, ids = await _seeded(mcp, app)
    calls = _calls(ids)
    async with connect(mcp.url, key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        # (the conftest's test-only adapter is no REST read)
        reads = {n for n, t in tools.items() if t.annotations.read_only_hint} - {TEST_TOOL}
        assert reads == set(calls), reads ^ set(calls)  # a new read tool needs seeded data here
        for name, tool in tools.items():
            if name not in reads:
                assert tool.output_schema is None, name
                continue
            schema = tool.output_schema
            assert schema is not None and schema["type"] == "object", name
            Draft202012Validator.check_schema(schema)
            # Standalone: no reference outside the schema itself.
            assert all(r.startswith("#/$defs/") for r in _refs(schema)), (name, _refs(schema))
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)  # the SDK validates it too
            assert not result.is_error, (name, result.content)
            structured = result.structured_content
            validator = Draft202012Validator(
                tools[name].output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
            problems = [
                f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(structured)
            ]
            assert not problems, (name, problems)
            [text] = result.content
            assert json.loads(text.text) == structured, name
            if isinstance(structured.get("data"), list) and name != "listNeedsAttention":
                assert structured["data"], (name, "no seeded data reached")


async def test_a_read_tool_answer_is_the_rest_body(mcp, app) -> None:
    key, ids = await _seeded(mcp, app)
    async with connect(mcp.url, key) as client:
        plan = await client.call_tool("getPlan", {"planId": ids["planId"]})
    assert plan.structured_content == await rest_body(mcp, key, f"/plans/{ids['planId']}")


async def test_tools_list_is_in_a_deterministic_order(mcp, db) -> None:
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        first = [t.name for t in (await client.list_tools()).tools]
    async with connect(mcp.url, actor.key, mode="2026-07-28") as client:
        second = [t.name for t in (await client.list_tools()).tools]
    assert first == sorted(first) == second
    assert len(first) > 40


async def test_a_read_tool_error_is_the_envelope_as_text_only(mcp, db) -> None:
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        missing = await client.call_tool("getPlan", {"planId": ID})
        invalid = await client.call_tool("getPlan", {"planId": "nope"})
        write = await client.call_tool("createAccount", {})
    for result in (missing, invalid):
        assert result.is_error and result.structured_content is None
        [text] = result.content
        envelope = json.loads(text.text)
        assert set(envelope) == {"error"} and set(envelope["error"]) == {
            "code",
            "message",
            "details",
        }
    assert json.loads(missing.content[0].text)["error"]["code"] == "not_found"
    assert json.loads(invalid.content[0].text)["error"]["code"] == "validation_error"
    # A tool without an output schema keeps the envelope as structured content too.
    assert error(write)["code"] == "validation_error"


async def test_a_2026_07_28_client_discovers_the_server_and_gets_structured_results(mcp, db):
    """The session-less revision: `server/discover` instead of `initialize` (the SDK client's
    default `auto` mode probes it), tools/list with a private cache hint, structured results."""
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        capabilities = client.server_capabilities
        assert capabilities.tools is not None and capabilities.prompts is None
        listing = await client.list_tools()
        meta = await client.call_tool("getMeta", {})
    assert listing.ttl_ms == 300_000 and listing.cache_scope == "private"
    tool = next(t for t in listing.tools if t.name == "getMeta")
    assert not meta.is_error and meta.structured_content
    Draft202012Validator(tool.output_schema).validate(meta.structured_content)
