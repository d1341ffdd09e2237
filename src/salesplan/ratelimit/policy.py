"""The policy table (spec "Rate limits"), the one module that both /meta and the limiter read."""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_SECONDS = 60
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# group: (read per minute, write per minute); None = none configured (unlimited on that axis).
DEFAULT_LIMITS: dict[str, tuple[int | None, int | None]] = {
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
    "webhooks": (60, 30),
}

GROUPS = tuple(DEFAULT_LIMITS)


@dataclass(frozen=True, slots=True)
class GroupLimits:
    read: int | None
    write: int | None

    def for_write(self, write: bool) -> int | None:
        """The effective limit of a verb class; None = none configured (unlimited)."""
        # Spec: "if the write limit is 0, writes use the read limit".
        limit = self.write if write and self.write != 0 else self.read
        # A read limit of 0 is likewise "not set": nothing to fall back to, so unlimited.
        return limit or None


def build_policy(overrides: dict[str, dict[str, int | None]] | None) -> dict[str, GroupLimits]:
    """The spec's table with `SALESPLAN_RATE_LIMITS` overrides applied, e.g.
    `{"plans": {"read": 5, "write": 3}}`."""
    policy = {g: GroupLimits(read, write) for g, (read, write) in DEFAULT_LIMITS.items()}
    for group, values in (overrides or {}).items():
        if not isinstance(values, dict):
            raise ValueError(f"SALESPLAN_RATE_LIMITS[{group}] must be an object")
        if group not in policy:
            raise ValueError(f"SALESPLAN_RATE_LIMITS names an unknown group: {group}")
        unknown = set(values) - {"read", "write"}
        if unknown:
            raise ValueError(f"SALESPLAN_RATE_LIMITS[{group}] has unknown keys: {sorted(unknown)}")
        for axis, value in values.items():
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ValueError(
                    f"SALESPLAN_RATE_LIMITS[{group}][{axis}] must be a count >= 0 or null"
                )
        current = policy[group]
        policy[group] = GroupLimits(
            values.get("read", current.read), values.get("write", current.write)
        )
    return policy


def is_write(method: str) -> bool:
    return method.upper() not in READ_METHODS
