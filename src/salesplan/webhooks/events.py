"""The event outbox (contract §13 "Events"): a service that changes something calls `record` (or
`record_many` for a batch) with the session or connection of that change, so that the event is
written in the same transaction: none is lost, none is sent for a change that rolled back.

An organization without an enabled endpoint subscribed to the type costs one indexed read and
nothing else: the resource is not even rendered (`data` may be a callable, called only when
someone will receive it). With subscribers: one event row and one delivery row per endpoint,
written in two statements, whatever the batch's size."""

from __future__ import annotations

import functools
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.kit.responses import json_bytes
from salesplan.kit.scoping import TenantScope
from salesplan.webhooks import repository

_RESOURCES = {
    "account": ("created", "updated", "deleted"),
    "contact": ("created", "updated", "deleted"),
    "opportunity": ("created", "updated", "deleted"),
    "plan": ("created", "updated", "deleted"),
    "plan_task": ("created", "updated", "completed"),
    "engage_message": ("sent", "delivered", "bounced", "opened", "clicked", "replied", "failed"),
    "engage_campaign": ("started", "completed"),
    "calendar_event": ("created", "updated", "deleted"),
    "feed_message": ("received",),
}
EVENT_TYPES: tuple[str, ...] = tuple(
    f"{r}.{a}" for r, actions in _RESOURCES.items() for a in actions
)
# What an endpoint may subscribe to: a type, or `resource.*` for every type of a resource.
SUBSCRIBABLE: frozenset[str] = frozenset(EVENT_TYPES) | {f"{r}.*" for r in _RESOURCES}

MAX_BODY_BYTES = 256 * 1024
# At most one worker wake-up (PostgreSQL NOTIFY) per process in this time.
NOTIFY_EVERY_SECONDS = 0.2
_last_notify = -1e9
WAKE_CHANNEL = "salesplan_worker"  # salesplan.worker.context.WAKE_CHANNEL

Db = AsyncSession | AsyncConnection
Resource = Mapping[str, Any] | BaseModel
# The resource, or a callable answering it (or an awaitable of it): called only when an
# endpoint will receive the event.
Data = Resource | Callable[[], Resource | Awaitable[Resource]]


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


def body(type_: str, timestamp: datetime, data: Mapping[str, Any] | BaseModel) -> bytes:
    """`{"type", "timestamp", "data"}`; over 256 KiB, `data` keeps only what names the
    resource (`id`, `updatedAt`) and `"truncated": true`: the receiver reads the rest by id."""
    # The resource rendered once, by its model's own serializer (as `json_response` does).
    inner = data.model_dump_json(by_alias=True).encode() if isinstance(data, BaseModel) else None
    head = b'{"type":' + json_bytes(type_) + b',"timestamp":' + json_bytes(timestamp)
    raw = head + b',"data":' + (inner if inner is not None else json_bytes(data)) + b"}"
    if len(raw) <= MAX_BODY_BYTES:
        return raw
    full = data.model_dump(mode="json", by_alias=True) if isinstance(data, BaseModel) else data
    short = {k: full[k] for k in ("id", "updatedAt") if k in full} | {"truncated": True}
    return json_bytes({"type": type_, "timestamp": timestamp, "data": short})


async def has_subscribers(db: Db, organization_id: uuid.UUID, types: Sequence[str]) -> bool:
    """Whether an enabled endpoint of the organization receives one of `types` (a fast path
    that cannot record an event in its statement asks before it runs)."""
    endpoints = await repository.enabled_endpoints(db, {organization_id})
    return any(
        subscribed(event_types, t)
        for _, event_types in endpoints.get(organization_id, ())
        for t in types
    )


async def changed(db: Db, scope: TenantScope, type_: str, schema: type[BaseModel], row: Any) -> int:
    """`record` of a row as the API answers it (`schema`), rendered only for subscribers."""
    return await record(db, scope.organization_id, type_, lambda: schema.model_validate(row))


async def record(db: Db, organization_id: uuid.UUID, type_: str, data: Data) -> int:
    """Record one event of `organization_id` in `db`'s transaction; answers how many endpoints
    will receive it (0: nothing written)."""
    return await record_many(db, [(organization_id, type_, data)])


async def record_many(db: Db, events: Iterable[tuple[uuid.UUID, str, Data]]) -> int:
    """Record a batch of events (of any organizations) in `db`'s transaction, set-based: one
    read of the subscribed endpoints, then one insert of events and one of deliveries."""
    batch = list(events)
    if not batch:
        return 0
    for _, type_, _ in batch:
        if type_ not in EVENT_TYPES:
            raise ValueError(f"unknown webhook event type {type_}")
    endpoints = await repository.enabled_endpoints(db, {org for org, _, _ in batch})
    if not endpoints:
        return 0
    now = utcnow()
    event_rows: list[dict[str, Any]] = []
    for organization_id, type_, data in batch:
        receivers = [
            endpoint_id
            for endpoint_id, types in endpoints.get(organization_id, ())
            if subscribed(types, type_)
        ]
        if not receivers:
            continue
        event_id = uuid7()
        payload = body(type_, now, await _plain(data)).decode()
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
    await wake(db)
    return len(delivery_rows)


def _dialect(db: Db) -> str:
    bind = db.bind if isinstance(db, AsyncSession) else db
    return bind.dialect.name if bind is not None else ""


async def wake(db: Db) -> None:
    """Wake the worker when the transaction commits: on a session, the unit of work's `JobDue`
    event (`worker.context.wake_worker`); on a driver connection (no events there), a
    transactional NOTIFY and the in-process worker's event, harmless before the commit since
    the loop re-reads."""
    from salesplan.worker import context

    if isinstance(db, AsyncSession):
        await context.wake_worker(db)
        return
    bind = db
    if bind is not None and bind.dialect.name == "postgresql":
        await repository.notify(db, WAKE_CHANNEL)
    if context.in_process_wakeup is not None:
        context.in_process_wakeup.set()


# -- Engage messages -------------------------------------------------------------------------


def _queue_item(message: Any, changed: Mapping[str, Any]) -> BaseModel:
    """A message as listEngageQueue answers it, with `changed` (by Python name) as they stand
    after the change."""
    from salesplan.engage.delivery.schemas import QueueItemOut

    item = QueueItemOut.model_validate(message)
    return item.model_copy(update=dict(changed)) if changed else item


async def record_engage_message(db: Db, message: Any, type_: str, **changed: Any) -> int:
    """One Engage message's event (`engage_message.sent`, …) in `db`'s transaction."""
    return await record(db, message.organization_id, type_, lambda: _queue_item(message, changed))


async def record_engage_messages(
    db: Db, changes: Iterable[tuple[Any, str, Mapping[str, Any]]]
) -> int:
    """`record_engage_message` of a batch: (message, type, changed fields) each."""
    return await record_many(
        db,
        [
            (message.organization_id, type_, functools.partial(_queue_item, message, changed))
            for message, type_, changed in changes
        ],
    )


async def record_engage_message_change(db: Db, message: Any, now: datetime) -> int:
    """The event of what an inbound report or reply just did to a message: the stamp that
    is `now` says which (a repeated report changes no stamp and records nothing)."""
    for stamp, type_ in (
        ("bounced_at", "engage_message.bounced"),
        ("delivered_at", "engage_message.delivered"),
        ("replied_at", "engage_message.replied"),
    ):
        if getattr(message, stamp, None) == now:
            return await record_engage_message(db, message, type_)
    return 0


async def record_engage_message_tracked(db: AsyncSession, message_id: uuid.UUID, type_: str) -> int:
    """An open or a click of a tracked message (`engage_message.opened`/`.clicked`)."""
    from salesplan.models.engage_delivery import EngageMessage

    message = await db.get(EngageMessage, message_id, populate_existing=True)
    if message is None:
        return 0
    return await record_engage_message(db, message, type_)


def failures(
    messages: Mapping[Any, Any], rows: Iterable[Mapping[str, Any]]
) -> list[tuple[Any, str, Mapping[str, Any]]]:
    """The `engage_message.failed` events of the delivery worker's outcome rows."""
    return [
        (
            messages[row["b_id"]],
            "engage_message.failed",
            {k: row[k] for k in ("status", "attempts", "last_error", "updated_at") if k in row},
        )
        for row in rows
        if row.get("status") == "failed"
    ]
