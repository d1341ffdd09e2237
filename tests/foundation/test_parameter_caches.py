"""kit.adapters: FastAPI's per-parameter helpers answer once per parameter, and answer what
FastAPI's own would, for every parameter of every route."""

from __future__ import annotations

import fastapi.dependencies.utils as fastapi_utils
from fastapi.routing import APIRoute

from salesplan.kit import adapters


def _parameters(app) -> list:  # type: ignore[no-untyped-def]
    fields = []
    todo = [route.dependant for route in app.router.routes if isinstance(route, APIRoute)]
    while todo:
        dependant = todo.pop()
        for group in ("path_params", "query_params", "header_params", "cookie_params"):
            fields.extend(getattr(dependant, group))
        todo.extend(dependant.dependencies)
    return fields


def test_every_helper_is_replaced_once(app) -> None:
    """A FastAPI release that renames or drops a helper fails here, instead of the gain
    going silently; installing again (another app) wraps nothing twice."""
    for name in adapters.PARAMETER_HELPERS:
        helper = getattr(fastapi_utils, name)
        assert getattr(helper, "remembering", False), name
        assert not getattr(helper.__wrapped__, "remembering", False), name
    adapters.install_parameter_caches()
    for name in adapters.PARAMETER_HELPERS:
        assert not getattr(getattr(fastapi_utils, name).__wrapped__, "remembering", False)


def test_the_answers_are_fastapis_for_every_parameter(app) -> None:
    fields = _parameters(app)
    assert len(fields) > 100  # the app's routes, their query parameters among them
    assert any(f.alias == "pageSize" for f in fields)
    for field in fields:
        for _ in range(2):  # the first call remembers, the second answers from memory
            for name in ("_get_param_model", "_get_param_aliases", "_is_json_field"):
                helper = getattr(fastapi_utils, name)
                assert helper(field) == helper.__wrapped__(field), (name, field.alias)
            annotation = field.field_info.annotation
            sequence = fastapi_utils.field_annotation_is_sequence
            assert sequence(annotation) == sequence.__wrapped__(annotation), field.alias


def test_further_arguments_go_to_the_helper() -> None:
    calls = []

    def helper(obj, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((obj, args, kwargs))
        return len(calls)

    remembered = adapters.remembering(helper)
    key = object()
    assert remembered(key) == remembered(key) == 1
    assert remembered(key, convert_underscores=True) == 2
    assert remembered(object()) == 3
    assert len(calls) == 3
