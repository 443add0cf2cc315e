"""Which code streams which API. Built-in APIs are imported on first use, by dotted path, so
`import apex_ai` loads no provider SDK (anthropic alone costs ~1.5 s). `preload_api` starts that
import early, in a daemon thread, for a caller that knows the API before it needs it."""

from __future__ import annotations

import importlib
import threading
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
_SDKS: dict[str, tuple[str, ...]] = {
    "anthropic-messages": ("anthropic",),
    "openai-completions": ("openai",),
    "openai-responses": ("openai",),
}
"""The SDKs each built-in imports inside its stream function (so importing its module is cheap)."""
_registered: dict[str, ApiStreamFn] = {}
_preloads: dict[str, threading.Thread] = {}
_preloads_lock = threading.Lock()
_held: list[str] | None = None
"""While preloads are held (`hold_preloads`): the APIs asked for meanwhile, started on release."""


def register_api(api: str, stream_fn: ApiStreamFn) -> None:
    """Register (or replace) the implementation of an API, e.g. from an extension."""
    _registered[api] = stream_fn


def unregister_api(api: str) -> None:
    _registered.pop(api, None)


def get_api(api: str) -> ApiStreamFn | None:
    """The implementation of `api`, importing a built-in one on first use; None if unknown. Do not call
    it from a module's import-time code while a preload runs (the join could wait on that import).

    When `preload_api(api)` started the imports, this waits for that thread (module and SDK) instead of
    importing alongside it: two threads importing one package tree can see each other's half-built
    modules. An import that failed there is retried here, so its exception reaches the caller.
    """
    found = _registered.get(api)
    if found is not None:
        return found
    target = _BUILTIN.get(api)
    if target is None:
        return None
    with _preloads_lock:
        preload = _preloads.get(api)
    if preload is not None and preload is not threading.current_thread():
        preload.join()
    return _import_builtin(api, target)


def _import_builtin(api: str, target: str) -> ApiStreamFn:
    module_name, _, attr = target.partition(":")
    fn: ApiStreamFn = getattr(importlib.import_module(module_name), attr)
    # setdefault: a `register_api` that ran while the module was importing keeps its replacement.
    return _registered.setdefault(api, fn)


def _preload(api: str, target: str) -> None:
    try:
        _import_builtin(api, target)
        for sdk in _SDKS.get(api, ()):
            importlib.import_module(sdk)
    except Exception:
        pass  # get_api imports again in the caller's thread, and the stream function its SDK: they see it


def preload_api(api: str) -> None:
    """Start importing the implementation of built-in `api` and its SDK in a daemon thread.

    Returns at once. Idempotent: one thread per API per process; a no-op for an unknown API or one
    `get_api` already returned or `register_api` set. `get_api` waits for a preload it finds running.
    The import runs under the GIL: it overlaps with time the caller spends waiting (I/O, a user
    typing), not with the caller's own Python work.
    """
    if api in _registered:
        return
    target = _BUILTIN.get(api)
    if target is None:
        return
    with _preloads_lock:
        if api in _preloads:
            return
        if _held is not None:
            if api not in _held:
                _held.append(api)
            return
        thread = threading.Thread(target=_preload, args=(api, target), name=f"apex-ai-preload-{api}", daemon=True)
        _preloads[api] = thread
        # Started under the lock: get_api must never find (and join) a thread that has not started.
        thread.start()


def hold_preloads() -> Callable[[], None]:
    """Until the returned `release` is called, `preload_api` only notes the APIs asked for; `release` starts
    their preloads (and later calls start at once again). Releasing twice is harmless; a hold taken while one is
    already in place gets a `release` that does nothing (the first holder's release ends it).

    For a caller whose next moments are its own Python work, such as an app drawing its first screen: an import
    thread would compete with it for the GIL and slow it down rather than overlap with it. `get_api` is unaffected
    (an API it needs while held is imported in its caller's thread, as without any preload).
    """
    global _held
    with _preloads_lock:
        if _held is not None:
            return lambda: None
        mine: list[str] = []
        _held = mine

    def release() -> None:
        global _held
        with _preloads_lock:
            if _held is not mine:
                return
            _held = None
        for api in mine:
            preload_api(api)

    return release


def known_apis() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


__all__ = [
    "ApiStreamFn",
    "get_api",
    "hold_preloads",
    "known_apis",
    "preload_api",
    "register_api",
    "unregister_api",
]
