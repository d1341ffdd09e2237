from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.oauth import OAuthApp
from salesplan.oauth.apps import create_oauth_app
from tests.fixtures.factories import Actor
from tests.oauth.flow import REDIRECT


@dataclass
class AppWithSecret:
    app: OAuthApp
    secret: str


async def make_oauth_app(db: AsyncSession, actor: Actor, **kwargs: object) -> AppWithSecret:
    kwargs.setdefault("redirect_uris", [REDIRECT])
    kwargs.setdefault("scopes", ["organizations:read", "accounts:read", "plans:read"])
    app, secret = await create_oauth_app(
        db,
        owner_user_id=actor.user.id,
        name=str(kwargs.pop("name", "Pipeline Sync")),
        **kwargs,  # type: ignore[arg-type]
    )
    await db.commit()
    return AppWithSecret(app, secret)


@pytest.fixture
async def oauth_app(db: AsyncSession, actor: Actor) -> AppWithSecret:
    return await make_oauth_app(db, actor)
