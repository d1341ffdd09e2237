"""Merge fields in Jinja2's sandbox: a template sees plain dicts of strings (never our objects),
cannot call into Python, and an unknown field renders empty and is reported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import ChainableUndefined, TemplateSyntaxError
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from salesplan.errors import Unprocessable, ValidationFailed

_TEXT_ENV = ImmutableSandboxedEnvironment(autoescape=False)
_HTML_ENV = ImmutableSandboxedEnvironment(autoescape=True)


def check_syntax(source: str | None, field: str) -> None:
    """A template that does not parse is a 400 naming the field."""
    if source is None:
        return
    try:
        _TEXT_ENV.parse(source)
    except TemplateSyntaxError as exc:
        raise ValidationFailed.at(
            ["body", field], f"Template syntax error on line {exc.lineno}: {exc.message}"
        ) from None


@dataclass
class Rendered:
    subject: str | None
    body: str
    body_html: str | None
    unknown_fields: list[str]


def merge_context(
    contact: Any, account: Any | None, sender: Any | None, organization: Any | None
) -> dict[str, dict[str, Any]]:
    """What `{{ contact.firstName }}`, `{{ account.name }}`, `{{ sender.fullName }}` … see."""
    return {
        "contact": {
            "firstName": contact.first_name,
            "lastName": contact.last_name,
            "fullName": contact.full_name,
            "email": contact.email,
            "title": contact.title,
            "phone": contact.phone,
            "linkedinUrl": contact.linkedin_url,
        },
        "account": {
            "name": account.name if account else None,
            "domain": account.domain if account else None,
            "website": account.website if account else None,
            "industry": account.industry if account else None,
        },
        "sender": {
            "fullName": sender.full_name if sender else None,
            "email": sender.email if sender else None,
        },
        "organization": {"name": organization.name if organization else None},
    }


def render(
    subject: str | None,
    body: str,
    body_html: str | None,
    context: dict[str, dict[str, Any]],
) -> Rendered:
    unknown: list[str] = []
    parents = {id(value): name for name, value in context.items()}

    class Recording(ChainableUndefined):
        """Renders empty; remembers the dotted name that had no value."""

        def __init__(self, hint: Any = None, obj: Any = None, name: Any = None, exc: Any = None):
            super().__init__(hint, obj, name, exc)  # type: ignore[arg-type]
            if name is not None:
                parent = parents.get(id(obj)) if obj is not None else None
                dotted = f"{parent}.{name}" if parent else str(name)
                if isinstance(obj, ChainableUndefined):
                    dotted = f"{getattr(obj, '_undefined_name', '?')}.{name}"
                if dotted not in unknown:
                    unknown.append(dotted)

    # Known fields without a value (a contact with no title) render empty too, silently.
    values = {
        name: {k: ("" if v is None else v) for k, v in fields.items()}
        for name, fields in context.items()
    }
    parents = {id(value): name for name, value in values.items()}

    def one(source: str | None, html: bool) -> str | None:
        if source is None:
            return None
        env = _HTML_ENV if html else _TEXT_ENV
        env_undefined = env.overlay(undefined=Recording)
        try:
            return env_undefined.from_string(source).render(values)
        except TemplateError as exc:
            raise Unprocessable(
                f"The template cannot be rendered: {exc.message or type(exc).__name__}",
                details={"reason": "template_error"},
            ) from None

    rendered_body = one(body, False) or ""
    return Rendered(
        subject=one(subject, False),
        body=rendered_body,
        body_html=one(body_html, True),
        unknown_fields=unknown,
    )
