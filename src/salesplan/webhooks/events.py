"""The event outbox (contract §13 "Events"). A domain says what happened with a domain event
(`kit.events.ResourceEvent`: `AccountCreated`, `TaskCompleted`, `MessageSent`, …); the
`Recorder`, wired to those events in `salesplan.events`, records them on the transaction's
connection when the unit of work commits it: none is lost, none is sent for a change that
rolled back. No domain imports this module.

An organization without an enabled endpoint subscribed to the type costs one indexed read and
nothing else: the resource is not even rendered (`data` may be a callable, called only when
someone will receive it). With subscribers: one event row and one delivery row per endpoint,
written in two statements, whatever the batch's size."""

from __future__ import annotations

import inspect
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.kit.events import DomainEvent, Resource, ResourceEvent, emit
from salesplan.kit.ids import uuid7
from salesplan.kit.responses import json_bytes
from salesplan.webhooks import catalog, repository
from salesplan.worker.context import JobDue

EVENT_TYPES: tuple[str, ...] = catalog.EVENT_TYPES
_KNOWN = frozenset(EVENT_TYPES)
SUBSCRIBABLE: frozenset[str] = frozenset(catalog.SUBSCRIBABLE)

MAX_BODY_BYTES = 256 * 1024
# At most one worker wake-up (PostgreSQL NOTIFY) per process in this time.
NOTIFY_EVERY_SECONDS = 0.2
_last_notify = -1e9

Db = AsyncSession | AsyncConnection
# The resource, or a callable answering it (or an awaitable of it): called only when an
# endpoint will receive the event.
Data = Resource | Callable[[], Resource | Awaitable[Resource]]
# Who did it, when not the organization's own side: `{"type": "contact", "id"}`.
Actor = Mapping[str, object]


def subscribed(event_types: Sequence[str], type_: str) -> bool:
    """Whether an endpoint with these `eventTypes` (empty = all) receives `type_`."""
    if not event_types:
        return True
    resource = type_.split(".", 1)[0]
    return type_ in event_types or f"{resource}.*" in event_types


async def _plain(data: Data) -> Resource:
    if not callable(data):
        return data
    found = data()
    return await found if inspect.isawaitable(found) else found


def body(type_: str, timestamp: datetime, data: Resource, actor: Actor | None = None) -> bytes:
    """`{"type", "timestamp", "data"}` (and `"actor"` beside `data` for a change a buyer
    made); over 256 KiB, `data` keeps only what names the resource (`id`, `updatedAt`) and
    `"truncated": true`: the receiver reads the rest by id."""
    # The resource rendered once, by its model's own serializer (as `json_response` does).
    inner = data.model_dump_json(by_alias=True).encode() if isinstance(data, BaseModel) else None
    head = b'{"type":' + json_bytes(type_) + b',"timestamp":' + json_bytes(timestamp)
    if actor is not None:
        head += b',"actor":' + json_bytes(actor)
    raw = head + b',"data":' + (inner if inner is not None else json_bytes(data)) + b"}"
    if len(raw) <= MAX_BODY_BYTES:
        return raw
    full = data.model_dump(mode="json", by_alias=True) if isinstance(data, BaseModel) else data
    short = {k: full[k] for k in catalog.thin_keys(type_) if k in full} | {"truncated": True}
    said: dict[str, object] = {"type": type_, "timestamp": timestamp}
    if actor is not None:
        said["actor"] = actor
    return json_bytes(said | {"data": short})


def thin(payload: str) -> str:
    """The body a `"payload": "thin"` endpoint receives of a recorded event: `data` keeps only
    what names the resource (`id`, `updatedAt`), the rest as recorded (the same bytes on every
    retry)."""
    event = json.loads(payload)
    data = event.get("data")
    if isinstance(data, dict):
        keys = catalog.thin_keys(str(event.get("type")))
        event["data"] = {k: data[k] for k in keys if k in data}
    return json_bytes(event).decode()


async def has_subscribers(db: Db, organization_id: uuid.UUID, types: Sequence[str]) -> bool:
    """Whether an enabled endpoint of the organization receives one of `types` (a fast path
    that cannot record an event in its statement asks before it runs)."""
    endpoints = await repository.enabled_endpoints(db, {organization_id})
    return any(
        subscribed(event_types, t)
        for _, event_types in endpoints.get(organization_id, ())
        for t in types
    )


async def record(db: Db, organization_id: uuid.UUID, type_: str, data: Data) -> int:
    """Record one event of `organization_id` in `db`'s transaction; answers how many endpoints
    will receive it (0: nothing written)."""
    return await record_many(db, [(organization_id, type_, data)])


async def record_many(
    db: Db,
    events: Iterable[tuple[uuid.UUID, str, Data]],
    actors: Sequence[Actor | None] = (),
) -> int:
    """Record a batch of events (of any organizations) in `db`'s transaction, set-based: one
    read of the subscribed endpoints, then one insert of events and one of deliveries.
    `actors`: who did each, in the batch's order (none: the organization's own side)."""
    batch = list(events)
    if not batch:
        return 0
    for _, type_, _ in batch:
        if type_ not in _KNOWN:
            raise ValueError(f"unknown webhook event type {type_}")
    endpoints = await repository.enabled_endpoints(db, {org for org, _, _ in batch})
    if not endpoints:
        return 0
    now = utcnow()
    event_rows: list[dict[str, Any]] = []
    for index, (organization_id, type_, data) in enumerate(batch):
        receivers = [
            endpoint_id
            for endpoint_id, types in endpoints.get(organization_id, ())
            if subscribed(types, type_)
        ]
        if not receivers:
            continue
        event_id = uuid7()
        actor = actors[index] if index < len(actors) else None
        payload = body(type_, now, await _plain(data), actor).decode()
        event_rows.append(
            {
                "id": event_id,
                "organization_id": organization_id,
                "type": type_,
                "payload": payload,
                "created_at": now,
                "delivery_ids": [uuid7() for _ in receivers],
                "endpoint_ids": receivers,
            }
        )
    if not event_rows:
        return 0
    if _dialect(db) == "postgresql":
        # One statement per event (its deliveries and the worker's wake-up in it), all the
        # batch's sent at once: one round trip.
        # The worker's wake-up at most every NOTIFY_EVERY_SECONDS: a NOTIFY serializes
        # committing transactions on the server's notification queue lock, and under a stream
        # of writes the worker woken a moment ago (and its delivery lanes, which claim the
        # next due delivery as each one ends) is awake already.
        global _last_notify
        notify = time.monotonic() - _last_notify >= NOTIFY_EVERY_SECONDS
        if notify:
            _last_notify = time.monotonic()
        await repository.record_on_postgresql(db, event_rows, notify=notify)
        return sum(len(row["endpoint_ids"]) for row in event_rows)
    delivery_rows = [
        {
            "id": delivery_id,
            "organization_id": row["organization_id"],
            "endpoint_id": endpoint_id,
            "event_id": row["id"],
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
            "updated_at": now,
        }
        for row in event_rows
        for delivery_id, endpoint_id in zip(row["delivery_ids"], row["endpoint_ids"], strict=True)
    ]
    await repository.insert_events(db, event_rows, delivery_rows)
    emit(db, JobDue())  # the worker woken when the transaction commits
    return len(delivery_rows)


async def record_for_endpoint(
    db: Db,
    organization_id: uuid.UUID,
    endpoint_id: uuid.UUID,
    type_: str,
    data: Resource,
    now: datetime,
) -> uuid.UUID:
    """One event for one endpoint alone, due now, whatever its `eventTypes` (a test event);
    answers the event's id. The caller wakes the worker."""
    event_id = uuid7()
    event = {
        "id": event_id,
        "organization_id": organization_id,
        "type": type_,
        "payload": body(type_, now, data).decode(),
        "created_at": now,
    }
    delivery = {
        "id": uuid7(),
        "organization_id": organization_id,
        "endpoint_id": endpoint_id,
        "event_id": event_id,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
        "updated_at": now,
    }
    await repository.insert_events(db, [event], [delivery])
    return event_id


def _dialect(db: Db) -> str:
    bind = db.bind if isinstance(db, AsyncSession) else db
    return bind.dialect.name if bind is not None else ""


class Recorder:
    """The outbox as a subscriber of the domains' events (`kit.events.ResourceEvent`): which
    event is which webhook type, wired in `salesplan.events` (`recorder.on(AccountCreated,
    "account.created")`). Each round of a transaction's events is recorded in one
    `record_many`; a resource is rendered only for an organization with a subscribed
    endpoint."""

    def __init__(self) -> None:
        self.types: dict[type[ResourceEvent], str] = {}

    def on(self, kind: type[ResourceEvent], type_: str) -> None:
        if type_ not in _KNOWN:
            raise ValueError(f"unknown webhook event type {type_}")
        self.types[kind] = type_

    @property
    def kinds(self) -> tuple[type[ResourceEvent], ...]:
        return tuple(self.types)

    async def record(self, conn: AsyncConnection, events: Sequence[ResourceEvent]) -> None:
        """In the transaction of the change: the events' webhook rows."""
        await record_many(
            conn,
            [(e.organization_id, self.types[type(e)], partial(e.resource, conn)) for e in events],
            [e.actor() for e in events],
        )

    async def interested(
        self,
        conn: AsyncConnection,
        organization_id: uuid.UUID,
        kinds: Sequence[type[DomainEvent]],
    ) -> bool:
        """Whether an enabled endpoint of the organization receives one of these events."""
        types = [self.types[k] for k in kinds if k in self.types]
        return bool(types) and await has_subscribers(conn, organization_id, types)
