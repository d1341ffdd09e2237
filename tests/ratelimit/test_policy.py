"""The policy table: the spec's defaults, overrides, the 0 and "none configured" rules."""

from __future__ import annotations

import pytest

from salesplan.config import Settings
from salesplan.ratelimit.policy import DEFAULT_LIMITS, GroupLimits, build_policy, is_write

SPEC_TABLE = {
    "foundation": (120, 60),
    "organizations": (60, 60),
    "accounts": (120, 60),
    "contacts": (120, 60),
    "opportunities": (120, 60),
    "relationship_maps": (60, 30),
    "feed": (30, None),
    "engage": (60, 30),
    "engage_send": (None, 20),
    "engage_queue": (60, 30),
    "engage_analytics": (20, None),
    "plans": (90, 45),
    "calendar": (60, 30),
    "webhooks": (60, 30),  # contract §13
}


def test_default_policy_is_the_spec_table() -> None:
    assert DEFAULT_LIMITS == SPEC_TABLE
    policy = build_policy(None)
    for group, (read, write) in SPEC_TABLE.items():
        assert policy[group] == GroupLimits(read, write)


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "get"])
def test_read_verbs_are_the_read_class(method: str) -> None:
    assert is_write(method) is False


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_other_verbs_are_the_write_class(method: str) -> None:
    assert is_write(method) is True


def test_write_limit_zero_falls_back_to_the_read_limit() -> None:
    policy = build_policy({"organizations": {"read": 7, "write": 0}})
    assert policy["organizations"].for_write(True) == 7
    assert policy["organizations"].for_write(False) == 7


def test_none_configured_is_unlimited_on_that_axis() -> None:
    policy = build_policy(None)
    assert policy["feed"].for_write(True) is None
    assert policy["feed"].for_write(False) == 30
    assert policy["engage_send"].for_write(False) is None
    assert policy["engage_send"].for_write(True) == 20
    assert policy["engage_analytics"].for_write(True) is None


def test_read_limit_zero_means_not_set() -> None:
    policy = build_policy({"plans": {"read": 0, "write": 0}})
    assert policy["plans"].for_write(False) is None
    assert policy["plans"].for_write(True) is None


def test_override_changes_only_the_axes_it_names() -> None:
    policy = build_policy({"plans": {"read": 5}, "feed": {"write": 3}})
    assert policy["plans"] == GroupLimits(5, 45)
    assert policy["feed"] == GroupLimits(30, 3)
    assert policy["accounts"] == GroupLimits(120, 60)


def test_override_may_remove_a_limit_with_null() -> None:
    policy = build_policy({"accounts": {"write": None}})
    assert policy["accounts"].for_write(True) is None


@pytest.mark.parametrize(
    "override",
    [
        {"nope": {"read": 1}},
        {"plans": {"reads": 1}},
        {"plans": {"read": -1}},
        {"plans": {"read": True}},
        {"plans": 5},
    ],
)
def test_bad_override_is_refused(override: dict) -> None:
    with pytest.raises(ValueError):
        build_policy(override)


def test_environment_json_override_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "SALESPLAN_RATE_LIMITS", '{"plans": {"read": 5, "write": 3}, "feed": {"write": null}}'
    )
    monkeypatch.setenv("SALESPLAN_RATE_LIMITS_ENABLED", "false")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.rate_limits == {"plans": {"read": 5, "write": 3}, "feed": {"write": None}}
    assert settings.rate_limits_enabled is False
    assert build_policy(settings.rate_limits)["plans"] == GroupLimits(5, 3)
