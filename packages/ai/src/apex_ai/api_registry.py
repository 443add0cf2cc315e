"""Which code streams which API. Built-in APIs are imported on first use, by dotted path, so
`import apex_ai` loads no provider SDK (anthropic alone costs ~1.5 s)."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.types import Context, Model

ApiStreamFn: TypeAlias = Callable[
    [Model, Context, StreamOptions | SimpleStreamOptions, AssistantMessageEventStream, str | None], Awaitable[None]
]
"""`(model, context, options, out, api_key) -> None`.

Contract: push `start` once the provider answered, then block events, then exactly one `done`
or `error` event, and return. It may raise only before pushing anything; the dispatcher turns
such an exception into a lone `error` event. `options` is a `SimpleStreamOptions` when the caller
used `stream_simple()`: the implementation maps `options.reasoning` itself.
"""

_BUILTIN: dict[str, str] = {
    "anthropic-messages": "apex_ai.providers.anthropic:stream_anthropic",
    "openai-completions": "apex_ai.providers.openai_completions:stream_openai_completions",
    "openai-responses": "apex_ai.providers.openai_responses:stream_openai_responses",
    "faux": "apex_ai.providers.faux:stream_faux",
}
_registered: dict[str, ApiStreamFn] = {}


def register_api(api: str, stream_fn: ApiStreamFn) -> None:
    """Register (or replace) the implementation of an API, e.g. from an extension."""
    _registered[api] = stream_fn


def unregister_api(api: str) -> None:
    _registered.pop(api, None)


def get_api(api: str) -> ApiStreamFn | None:
    """The implementation of `api`, importing a built-in one on first use; None if unknown."""
    found = _registered.get(api)
    if found is not None:
        return found
    target = _BUILTIN.get(api)
    if target is None:
        return None
    module_name, _, attr = target.partition(":")
    fn: ApiStreamFn = getattr(importlib.import_module(module_name), attr)
    _registered[api] = fn
    return fn


def known_apis() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


__all__ = ["ApiStreamFn", "get_api", "known_apis", "register_api", "unregister_api"]
