"""FastAPI's per-request parameter introspection, answered once per parameter.

For every query, header, cookie and path parameter of every request, FastAPI's
`request_params_to_args` asks again things that depend only on how the parameter was
declared: whether it is a parameter model (`_get_param_model`), its aliases
(`_get_param_aliases`), whether it is a `Json` field (`_is_json_field`), whether its
annotation is a sequence (`field_annotation_is_sequence`, twice). Those are typing
introspection (`get_origin`, `issubclass` over unions) and cost listPlans, with its ten query
parameters, about 12 % of its CPU per request (bench/README.md, "What changed
(2026-11-25)"). `install()` replaces those module-level helpers of
`fastapi.dependencies.utils` with the same functions remembering their answer per parameter
object (the ModelField, or the annotation): the objects are built with the routes and live
as long as they do, and the answers are pure functions of them.

The behaviour is FastAPI's own: a call with more arguments goes to the original, and an
object not seen before is answered by it. `tests/foundation/test_fastparams.py` checks that
every helper is still there to be replaced (a FastAPI release that renames one fails it
rather than silently losing the gain) and that the cached answers equal FastAPI's for every
parameter of every route."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import fastapi.dependencies.utils as fastapi_utils

HELPERS = (
    "_get_param_model",
    "_get_param_aliases",
    "_is_json_field",
    "field_annotation_is_sequence",
)
"""The helpers of `fastapi.dependencies.utils` that `request_params_to_args` and
`_get_multidict_value` call per parameter and per request, pure functions of their first
argument."""

_LIMIT = 65_536
"""Objects remembered per helper at most (routes' parameters are a few hundred; apps built
again and again, as in the tests, add theirs): past it, the memory starts over."""


def remembering(helper: Callable[..., Any]) -> Callable[..., Any]:
    """`helper(obj)` answered once per object (by identity; the object is held so that its
    id is not reused); calls with further arguments go to `helper` itself."""
    answers: dict[int, tuple[Any, Any]] = {}

    @functools.wraps(helper)
    def remembered(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return helper(obj, *args, **kwargs)
        found = answers.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        answer = helper(obj)
        if len(answers) >= _LIMIT:
            answers.clear()
        answers[id(obj)] = (obj, answer)
        return answer

    remembered.remembering = True  # type: ignore[attr-defined]
    return remembered


def install() -> None:
    """Replace the helpers (once per process; creating more apps changes nothing)."""
    for name in HELPERS:
        helper = getattr(fastapi_utils, name)
        if not getattr(helper, "remembering", False):
            setattr(fastapi_utils, name, remembering(helper))
