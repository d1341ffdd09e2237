"""Templates and drafts (contract §7 engage; spec "Archiving" 3-4)."""

from __future__ import annotations

from sqlalchemy import func, select

from salesplan.models.engage import EngageDraft
from tests.engage.helpers import API, email_template
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor, make_key

TEMPLATE_KEYS = {
    "id", "name", "channel", "subject", "body", "bodyHtml", "archivedAt", "createdAt", "updatedAt",
}  # fmt: skip


async def test_create_template_answers_201_with_its_fields(client, actor) -> None:
    tpl = await email_template(client, actor, bodyHtml="<p>Hello</p>")
    assert set(tpl) == TEMPLATE_KEYS
    assert tpl["channel"] == "EMAIL" and tpl["archivedAt"] is None
    assert tpl["bodyHtml"] == "<p>Hello</p>"


async def test_subject_is_required_for_email_only(client, actor) -> None:
    resp = await client.post(
        f"{API}/templates",
        json={"name": "x", "channel": "EMAIL", "body": "b"},
        headers=actor.headers,
    )
    assert_envelope(resp, 400, "validation_error")
    for channel in ("LINKEDIN", "SLACK"):
        resp = await client.post(
            f"{API}/templates", json={"name": "x", "channel": channel, "body": "b"},
            headers=actor.headers,
        )  # fmt: skip
        assert resp.status_code == 201, resp.text


async def test_template_needs_name_channel_body_and_rejects_unknown_fields(client, actor) -> None:
    good = {"name": "x", "channel": "SLACK", "body": "b"}
    for broken in (
        {k: v for k, v in good.items() if k != "name"},
        {k: v for k, v in good.items() if k != "body"},
        good | {"channel": "FAX"},
        good | {"extra": 1},
        good | {"body": "{{ contact.firstName "},
    ):
        resp = await client.post(f"{API}/templates", json=broken, headers=actor.headers)
        assert_envelope(resp, 400, "validation_error")


async def test_update_template_changes_only_sent_fields(client, actor) -> None:
    tpl = await email_template(client, actor)
    resp = await client.patch(
        f"{API}/templates/{tpl['id']}", json={"body": "New"}, headers=actor.headers
    )
    assert resp.status_code == 200
    assert resp.json()["body"] == "New" and resp.json()["subject"] == "Hi"
    resp = await client.patch(
        f"{API}/templates/{tpl['id']}", json={"subject": None}, headers=actor.headers
    )
    assert_envelope(resp, 400, "validation_error")


async def test_delete_template_archives_it(client, actor) -> None:
    tpl = await email_template(client, actor)
    url = f"{API}/templates/{tpl['id']}"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    assert (await client.get(f"{API}/templates", headers=actor.headers)).json()["data"] == []
    listed = await client.get(f"{API}/templates?includeArchived=true", headers=actor.headers)
    assert [t["id"] for t in listed.json()["data"]] == [tpl["id"]]


async def test_list_templates_filters_by_channel(client, actor) -> None:
    await email_template(client, actor)
    await email_template(client, actor, channel="SLACK")
    resp = await client.get(f"{API}/templates?channel=SLACK", headers=actor.headers)
    assert [t["channel"] for t in resp.json()["data"]] == ["SLACK"]
    assert resp.json()["pagination"]["totalCount"] == 1


async def test_preview_renders_merge_fields_for_a_contact(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id, "Acme")
    contact = await make_contact(db, account, "Ada", "Lovelace", title="CTO")
    tpl = await email_template(
        client, actor,
        subject="Hi {{ contact.firstName }}",
        body="{{ contact.fullName }} of {{ account.name }} from {{ sender.fullName }}",
        bodyHtml="<p>{{ contact.title }}</p>",
    )  # fmt: skip
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    assert resp.status_code == 200, resp.text
    data = resp.json()
    assert data["subject"] == "Hi Ada"
    assert data["body"] == f"Ada Lovelace of Acme from {actor.user.full_name or ''}"
    assert data["bodyHtml"] == "<p>CTO</p>"
    assert data["unknownFields"] == []


async def test_preview_renders_unknown_fields_empty_and_reports_them(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    tpl = await email_template(client, actor, body="[{{ contact.shoeSize }}][{{ nothing }}]")
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    assert resp.json()["body"] == "[][]"
    assert resp.json()["unknownFields"] == ["contact.shoeSize", "nothing"]


async def test_preview_sandbox_keeps_python_objects_out_of_reach(client, actor, db) -> None:
    escape = "{{ contact.__class__.__mro__[1].__subclasses__() }}"
    # Refused already when stored (contract §12: a render error at create is a 422) ...
    created = await client.post(
        f"{API}/templates",
        json={"name": "Intro", "channel": "EMAIL", "subject": "Hi", "body": escape},
        headers=actor.headers,
    )
    error = assert_envelope(created, 422, "unprocessable")
    assert error["details"] == {"reason": "template_error"}
    assert "unsafe" in error["message"] and "<class" not in created.text
    # ... and at preview, for a template that reaches it only with a contact's values.
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    tpl = await email_template(
        client, actor, body="{% if contact.firstName %}" + escape + "{% endif %}"
    )
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    error = assert_envelope(resp, 422, "unprocessable")
    assert error["details"] == {"reason": "template_error"}
    assert "unsafe" in error["message"] and "<class" not in resp.text


async def test_preview_html_escapes_contact_values(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account, "<script>x</script>", "Z")
    tpl = await email_template(client, actor, bodyHtml="<b>{{ contact.firstName }}</b>")
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    assert resp.json()["bodyHtml"] == "<b>&lt;script&gt;x&lt;/script&gt;</b>"


async def test_preview_of_a_contact_of_another_organization_is_422(client, actor, db) -> None:
    other = await make_actor(db)
    account, _ = await make_account(db, other.org.id)
    contact = await make_contact(db, account)
    tpl = await email_template(client, actor)
    resp = await client.post(
        f"{API}/templates/{tpl['id']}/preview",
        json={"contactId": str(contact.id)},
        headers=actor.headers,
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"]["field"] == "contactId"


async def test_template_of_another_organization_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    tpl = await email_template(client, other)
    resp = await client.get(f"{API}/templates/{tpl['id']}", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")


async def test_engage_reads_need_engage_read_and_writes_engage_write(client, actor, db) -> None:
    reader = await make_key(db, actor.user, scopes=["engage:read"])
    headers = {"Authorization": f"Bearer {reader}"}
    assert (await client.get(f"{API}/templates", headers=headers)).status_code == 200
    resp = await client.post(
        f"{API}/templates", json={"name": "x", "channel": "SLACK", "body": "b"}, headers=headers
    )
    assert assert_envelope(resp, 403, "forbidden")["details"]["requiredScope"] == "engage:write"
    writer = await make_key(db, actor.user, scopes=["engage:write"])
    resp = await client.get(f"{API}/drafts", headers={"Authorization": f"Bearer {writer}"})
    assert assert_envelope(resp, 403, "forbidden")["details"]["requiredScope"] == "engage:read"


async def test_draft_crud_and_permanent_delete(client, actor, app) -> None:
    resp = await client.post(
        f"{API}/drafts",
        json={"channel": "EMAIL", "subject": "S", "body": "B", "name": "D"},
        headers=actor.headers,
    )
    assert resp.status_code == 201, resp.text
    draft = resp.json()
    url = f"{API}/drafts/{draft['id']}"
    resp = await client.patch(url, json={"body": "B2"}, headers=actor.headers)
    assert resp.json()["body"] == "B2" and resp.json()["subject"] == "S"
    listed = (await client.get(f"{API}/drafts", headers=actor.headers)).json()
    assert [d["id"] for d in listed["data"]] == [draft["id"]]
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert_envelope(await client.get(url, headers=actor.headers), 404, "not_found")
    async with app.state.sessionmaker() as session:
        count = (await session.execute(select(func.count()).select_from(EngageDraft))).scalar()
    assert count == 0


async def test_draft_references_must_exist_in_the_organization(client, actor, db) -> None:
    other = await make_actor(db)
    tpl = await email_template(client, other)
    resp = await client.post(
        f"{API}/drafts", json={"channel": "EMAIL", "templateId": tpl["id"]}, headers=actor.headers
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"]["field"] == "templateId"
