"""The routes a plan's milestones, goals and tasks share (contract §7 "plans"): `Child`
declares a kind's list, create, read, update, archive and restore routes in a line each
(children_router.py). Their route functions are built by `kit.routes.endpoint` with the
signature a hand-written route would have, so FastAPI reads the same parameters."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Generic, TypeVar, Unpack

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import UoW
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Declared, Default, Flag, Run, endpoint, only_id
from salesplan.kit.scoping import SqlColumn
from salesplan.kit.uow import UnitOfWork
from salesplan.plans import repository as repo
from salesplan.plans import service
from salesplan.plans.dependencies import (
    NO_CONTENT,
    Delete,
    IncludeArchived,
    Read,
    Write,
    listed,
)
from salesplan.plans.render import Obj
from salesplan.plans.write_repository import Child as ChildModel

BodyT = TypeVar("BodyT", bound=BaseModel)
View = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[Obj]]
Change = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[None]]


@dataclass(frozen=True)
class Child(Generic[ChildModel]):
    """One kind of a plan's children, at `/{planId}/<noun>s/{<id_name>}` on `router`, and its
    list, create, read, update, archive and restore routes: operations `<verb>Plan<noun>`,
    route functions `<verb>_<noun>` of `module`, answering `view` (archive: 204). Each
    route's parameters come in the hand-written order: planId, the child's id, body, ctx,
    uow."""

    router: APIRouter
    module: str
    noun: str
    id_name: str
    model: type[ChildModel]
    tags: list[str | Enum]
    out: type[BaseModel]
    view: View

    def list_route(
        self,
        listing: type[BaseModel],
        doc: str,
        sortable: tuple[str, ...],
        sort_columns: Mapping[str, SqlColumn],
        *,
        default_sort: str = "createdAt",
        **filters: Default,
    ) -> None:
        """`filters`: query parameters among `repo.child_filters`' (milestone_id, completed,
        assigned_to_id)."""

        async def run(
            planId: uuid.UUID,
            ctx: RequestContext,
            uow: UnitOfWork,
            codec: CursorCodec,
            params: ListParams,
            include_archived: bool,
            milestone_id: uuid.UUID | None = None,
            completed: bool | None = None,
            assigned_to_id: uuid.UUID | None = None,
        ) -> Response:
            session = await uow.session()
            where = repo.child_filters(
                self.model,
                milestone_id=milestone_id,
                completed=completed,
                assigned_to_id=assigned_to_id,
            )
            items, meta = await service.list_children(
                session,
                ctx,
                planId,
                self.model,
                params,
                codec,
                include_archived=include_archived,
                where=where,
                sort_columns=sort_columns,
            )
            return listed(items, meta)

        parameters = {
            "planId": uuid.UUID,
            "ctx": Read,
            "uow": UoW,
            "codec": CursorCodecDep,
            "params": Annotated[ListParams, list_params(sortable, default_sort)],
            "include_archived": Default(IncludeArchived, False),
            **filters,
        }
        self._add("GET", "", "list", doc, run, parameters, response_model=listing)

    def create_route(
        self,
        body: type[BodyT],
        create: Callable[[AsyncSession, RequestContext, uuid.UUID, BodyT], Awaitable[uuid.UUID]],
        doc: str,
        **declared: Unpack[Declared],
    ) -> None:
        async def run(
            planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork
        ) -> Response:
            session = await uow.session()
            child_id = await create(session, ctx, planId, body)
            return json_response(await self.view(session, ctx, planId, child_id), 201)

        parameters = {"planId": uuid.UUID, "body": body, "ctx": Write, "uow": UoW}
        self._add("POST", "", "create", doc, run, parameters, 201, **declared)

    def read_route(self, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await service.find_plan(session, ctx, planId)
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Read, "uow": UoW}
        self._add("GET", self._one, "get", doc, run, parameters)

    def update_route(
        self,
        body: type[BodyT],
        update: Callable[
            [AsyncSession, RequestContext, uuid.UUID, uuid.UUID, BodyT], Awaitable[None]
        ],
        doc: str,
    ) -> None:
        async def run(
            planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await update(session, ctx, planId, only_id(ids), body)
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {
            "planId": uuid.UUID,
            self.id_name: uuid.UUID,
            "body": body,
            "ctx": Write,
            "uow": UoW,
        }
        self._add("PATCH", self._one, "update", doc, run, parameters)

    def archive_route(self, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await service.archive_child(session, ctx, self.model, planId, only_id(ids))
            return Response(status_code=204)

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Delete, "uow": UoW}
        self._add("DELETE", self._one, "archive", doc, run, parameters, 204)

    def restore_route(self, restore: Change, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await restore(session, ctx, planId, only_id(ids))
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Write, "uow": UoW}
        self._add("POST", f"{self._one}/restore", "restore", doc, run, parameters)

    @property
    def _one(self) -> str:
        return f"/{{{self.id_name}}}"

    def _add(
        self,
        method: str,
        path: str,
        verb: str,
        doc: str,
        run: Run,
        parameters: Mapping[str, object],
        status_code: int | None = None,
        *,
        response_model: type[BaseModel] | None = None,
        summary: str | None = None,
        description: str | None = None,
        tool: Flag | None = None,
    ) -> None:
        plural = verb == "list"  # list_goals, listPlanGoals
        name = f"{verb}_{self.noun.lower()}{'s' if plural else ''}"
        route = endpoint(self.module, name, doc, run, **parameters)
        self.router.api_route(
            f"/{{planId}}/{self.noun.lower()}s{path}",
            methods=[method],
            operation_id=f"{verb}Plan{self.noun}{'s' if plural else ''}",
            tags=self.tags,
            status_code=status_code,
            response_model=None if status_code == 204 else response_model or self.out,
            responses=NO_CONTENT if status_code == 204 else None,
            summary=summary,
            description=description,
        )(tool(route) if tool is not None else route)
