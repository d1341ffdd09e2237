"""Pages at the origin, one module each: sign-in (/login, /logout), consent (/oauth/consent) and
developer settings (/settings/developer). Every form carries a CSRF token; every POST answers
303 (or re-renders the form with the problem). Pages needing a user take the signed-in-user
dependency of `web/deps.py`."""

from __future__ import annotations

from fastapi import APIRouter

from salesplan.web import consent, developer, signin

router = APIRouter(include_in_schema=False)
for _module in (signin, consent, developer):
    router.routes.extend(_module.router.routes)
