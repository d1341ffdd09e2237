"""One schemathesis pass over our own OpenAPI document, in process, with all its checks (issue
18): for every operation, positive (schema-valid) requests with a valid key and organization;
each response must conform to the document (no 5xx, status documented, body, headers and
content type per the document) and what the document says is valid must be accepted.

What no schema can know is not counted as "valid data rejected", each case narrowly:
- a 400 for `cursor` only: a cursor is opaque, only a `nextCursor` the same list answered
  is valid (contract §4);
- a 422 naming a body reference (`details.field`): the referenced id does not exist in the
  organization, or its stored state forbids the change (contract §1: 422 is "well-formed but
  semantically wrong"); random UUIDs never name rows;
- a 400 for `from`/`to` only on a date-range query: `to` before `from` or a range over the
  limit, a rule between two query parameters, which OpenAPI parameters cannot express (each is
  a separate schema) — their descriptions say it;
- the authorize page's 400 for an unregistered `client_id` (a random client id names no
  registered client, and a random https one no fetchable client metadata document);
- a refused organization value (contract §3): every organization-scoped operation declares
  `X-Organization-Id` and its `organizationId` alias, and a random UUID names no organization
  the token reaches (403 `organization_not_accessible`), or disagrees with the header the run
  sends (400 `validation_error` naming the disagreeing `organizationIds`). The server's checks
  stay as they are; only `positive_data_acceptance` is not applied to such a refusal. So that
  such refusals do not stop half the requests before the checks that follow the organization
  (validation, existence), `caller_organization` names the caller's own organization in four
  generated `organizationId` values out of five (as the run's header names it).
The token endpoint's 400/401 (unknown code, client) schemathesis itself treats as credential
rejections, since the document names it as the OAuth 2 `tokenUrl`."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

import hypothesis
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis.errors import Flaky

from salesplan.app import create_app


@dataclass
class FuzzResult:
    requests: int = 0
    findings: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    # Stateful phase: steps that followed a link, and those whose values came from an earlier
    # response (a real id) rather than being generated.
    linked: int = 0
    linked_applied: int = 0
    links: int = 0
    scenarios: int = 0
    restarts: int = 0

    @property
    def distinct(self) -> list[str]:
        return sorted(set(self.findings))

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)

    def summary(self) -> str:
        linked = (
            f", {self.scenarios} sequences, {self.linked} steps followed one of {self.links} "
            f"links ({self.linked_applied} with values from an earlier response)"
            if self.links
            else ""
        )
        restarts = f", {self.restarts} restarts after Flaky" if self.restarts else ""
        return (
            f"schemathesis (all checks): {self.requests} requests, "
            f"{self.server_errors} 5xx, {len(self.distinct)} distinct findings{linked}{restarts}"
        )

    def record(
        self, case: Any, response: Any, linked: set[tuple[str, str | None]] | None = None
    ) -> None:
        """Count the response and run every check on it (see `unknowable_refusal`, and
        `refused_link_values` for `linked`, the parameters a link filled)."""
        self.requests += 1
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        excluded = []
        if unknowable_refusal(case, response) or refused_link_values(response, linked or set()):
            excluded = [schemathesis.checks.positive_data_acceptance]
        if negative_only_in_overridden_header(case):
            excluded.append(schemathesis.checks.negative_data_rejection)
        try:
            case.validate_response(response, excluded_checks=excluded)
        except (AssertionError, BaseExceptionGroup) as exc:  # FailureGroup: all checks
            self.findings.extend(_finding(case, response, exc))


def negative_only_in_overridden_header(case: Any) -> bool:
    """A case made invalid only by its generated `X-Organization-Id`, which the run replaces
    by the caller's own (`headers` of `case.call`): the request sent is valid, so its 2xx is no
    "invalid data accepted"."""
    meta = getattr(case, "meta", None)
    components = getattr(meta, "components", None) or {}
    negative = {
        str(getattr(location, "value", location))
        for location, info in components.items()
        if info.mode == schemathesis.GenerationMode.NEGATIVE
    }
    if negative != {"header"}:
        return False
    generated = (case.headers or {}).get("X-Organization-Id")
    if generated is None:
        return False
    try:
        uuid.UUID(str(generated))
    except ValueError:
        return True
    return False


def _error(response: Any) -> dict[str, Any] | None:
    try:
        body = response.json()
    except ValueError:  # the authorize page's HTML
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None  # else an RFC 6749 body


def _locations(error: dict[str, Any]) -> list[list[Any]]:
    errors = (error.get("details") or {}).get("errors") or [{}]
    return [list(item.get("location") or []) for item in errors]


ORGANIZATION_ALIAS = "organizationId"


def caller_organization(case: Any, headers: dict[str, str]) -> None:
    """Replace a generated `organizationId` by the caller's organization (the run's
    `X-Organization-Id`), except one value in five (by the value: the same on every run),
    which stays and is refused (`refused_organization`). A value that is no UUID (a negative
    case) stays as generated."""
    query = case.query
    organization = headers.get("X-Organization-Id")
    if not query or organization is None or ORGANIZATION_ALIAS not in query:
        return
    generated = str(query[ORGANIZATION_ALIAS])
    try:
        uuid.UUID(generated)
    except ValueError:
        return  # a negative case's invalid value: the server must refuse it, so it stays
    if int(hashlib.sha256(generated.encode()).hexdigest(), 16) % 5:
        query[ORGANIZATION_ALIAS] = organization


def unknowable_refusal(case: Any, response: Any) -> bool:
    """A refusal of schema-valid data that depends on what only the server knows (see the
    module docstring), so that `positive_data_acceptance` does not apply to it."""
    if case.operation.path == "/api/v1/oauth/authorize":
        # An unregistered client id, or an https one whose metadata document (contract §8,
        # CIMD) cannot be fetched or is refused: random values name no client.
        return response.status_code == 400 and (
            "No application is registered" in response.text
            or "Client metadata document refused" in response.text
        )
    error = _error(response)
    if error is None:
        return False
    if refused_organization(error, response.status_code):
        return True
    if response.status_code == 422:
        # Contract §2: well-formed but semantically wrong for the stored state: a reference to
        # no row (`details.field`) or a rule on the row the path names (`details.reason`, e.g.
        # a member mutation on a DYNAMIC list, which the stateful phase reaches by its links).
        details = error.get("details") or {}
        return "field" in details or "reason" in details
    if response.status_code != 400 or error.get("code") != "validation_error":
        return False
    locations = _locations(error)
    if all(location == ["query", "cursor"] for location in locations):
        return True
    return all(location in (["query", "from"], ["query", "to"]) for location in locations)


def refused_organization(error: dict[str, Any], status: int) -> bool:
    """A refusal of the organization the request named (contract §3): one the token cannot
    reach (403) or organization values that disagree (400). Schema-valid UUIDs that only the
    server can tell apart from the caller's organizations."""
    details = error.get("details") or {}
    if status == 403:
        return error.get("code") == "forbidden" and (
            details.get("reason") == "organization_not_accessible"
        )
    return (
        status == 400
        and error.get("code") == "validation_error"
        and "organizationIds" in details
        and "errors" not in details
    )


def refused_link_values(response: Any, linked: set[tuple[str, str | None]]) -> bool:
    """A 400 naming only parameters that a link filled from an earlier response (stateful
    phase): those values were not generated from the parameter's schema, so their refusal is
    no "valid data rejected". The inferred links are guesses (a `name` fed to a `contactId`);
    an id a link carries correctly is valid and accepted. `linked` holds (location, name)
    pairs; a name of None is the whole body."""
    if not linked or response.status_code != 400:
        return False
    error = _error(response)
    if error is None or error.get("code") != "validation_error":
        return False
    for location in _locations(error):
        where = str(location[0]) if location else ""
        name = str(location[1]) if len(location) > 1 else None
        if (where, name) not in linked and (where, None) not in linked:
            return False
    return True


def _reason(response: Any) -> str:
    """Why the server refused: its error code and the first error's location and message."""
    error = _error(response)
    if error is None:
        return f"{response.status_code} {response.text[:120]!r}"
    first = ((error.get("details") or {}).get("errors") or [{}])[0]
    where = ".".join(str(part) for part in first.get("location") or [])
    message = first.get("message") or error.get("message", "")
    return f"{response.status_code} {error.get('code')} {where} {message}".strip()


def _finding(case: Any, response: Any, exc: BaseException) -> list[str]:
    """One line per failed check, named by operation and the server's reason (not by generated
    values), so that the same defect found with many inputs counts once."""
    failures = getattr(exc, "exceptions", None) or [exc]
    return [
        f"{case.method} {case.operation.path}: {type(f).__name__}: "
        f"{(getattr(f, 'message', '') or str(f)).strip().splitlines()[0][:160]}"
        f" [{_reason(response)[:200]}]"
        for f in failures
    ]


def _schema(app: Any) -> Any:
    """The served document, with negative cases made only of declared parameters: unknown
    query parameters are ignored by design (as by FastAPI), so a request made "invalid" by one
    (`?x=…` on an operation whose only query parameter is the optional `organizationId`) is a
    valid request."""
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    schema.config.generation.update(allow_extra_parameters=False)
    return schema


def fuzz(settings: Any, headers: dict[str, str], examples: int) -> FuzzResult:
    """Run every operation of the document `examples` times (derandomized: the same requests
    on every run) against an app built from `settings`."""
    app = create_app(settings)
    schema = _schema(app)
    result = FuzzResult()
    for operation_result in schema.get_all_operations():
        operation = operation_result.ok()

        @given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
        def run(case: Any) -> None:
            caller_organization(case, headers)
            result.record(case, case.call(headers=headers))

        run()
    return result


def links_of(schema: Any) -> int:
    """How many links the document has once schemathesis inferred them (it adds links from
    its analysis of which response fields feed which parameters: ids created by one operation
    used in the path of the next)."""
    count = 0
    for operation_result in schema.get_all_operations():
        responses = operation_result.ok().definition.raw.get("responses", {})
        count += sum(len((r or {}).get("links") or {}) for r in responses.values())
    return count


def stateful(settings: Any, headers: dict[str, str], scenarios: int, steps: int) -> FuzzResult:
    """Schemathesis' stateful phase: `scenarios` sequences of up to `steps` calls, each call
    chosen among the links of the previous response (create an account, then read, update,
    archive it, add its contacts, …), so that ids are real and the checks reach past the 404
    of a random id; every response gets all checks, as in `fuzz`.

    As schemathesis' own runner does: generation only (no replay or shrinking: the server's
    state moves on between scenarios, so a replayed sequence takes other links and Hypothesis
    calls that `Flaky`), and a `Flaky` restarts the remaining scenarios with the next seed (seeds
    1, 2, …: the same requests on every run)."""
    app = create_app(settings)
    schema = _schema(app)
    result = FuzzResult()
    machine = schema.as_state_machine()
    result.links = links_of(schema)

    class Workflow(machine):  # type: ignore[misc,valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            caller_organization(case, headers)
            return {"headers": headers}

        linked: set[tuple[str, str | None]] = set()

        def step(self, input: Any) -> Any:
            self.linked = {
                (str(getattr(location, "value", location)), name)
                for location, name in input.applied_parameters
            }
            if input.transition is not None:
                result.linked += 1
                result.linked_applied += bool(input.is_applied)
            return super().step(input)

        def validate_response(self, response: Any, case: Any, *args: Any, **kwargs: Any) -> None:
            result.record(case, response, self.linked)

        def teardown(self) -> None:
            result.scenarios += 1
            super().teardown()

    seed = 0
    while result.scenarios < scenarios and seed < 20:
        seed += 1
        try:
            hypothesis.seed(seed)(Workflow).run(
                settings=hypothesis.settings(
                    max_examples=scenarios - result.scenarios,
                    stateful_step_count=steps,
                    phases=[hypothesis.Phase.generate],
                    deadline=None,
                    database=None,
                    suppress_health_check=list(HealthCheck),
                )
            )
        except Flaky:
            result.restarts += 1
            continue
        break
    return result
