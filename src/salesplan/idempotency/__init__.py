"""`Idempotency-Key` for Engage sends (contract §6): the rules in `service`, the statements in
`repository`. The names the routers and the worker use are importable from here."""

from salesplan.idempotency.service import (
    EXPIRY,
    IN_FLIGHT,
    REPLAYED_HEADER,
    STALE_AFTER,
    Replay,
    check_key,
    fingerprint,
    prune_expired,
    run_idempotent,
)

__all__ = [
    "EXPIRY",
    "IN_FLIGHT",
    "REPLAYED_HEADER",
    "STALE_AFTER",
    "Replay",
    "check_key",
    "fingerprint",
    "prune_expired",
    "run_idempotent",
]
