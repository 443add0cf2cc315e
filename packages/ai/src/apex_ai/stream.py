"""`stream()` and friends: the one entry point from a model + context to events.

`stream()` returns at once. Registry lookup, key resolution and the API call all run inside a task the
returned stream holds, so every failure after the call returns is an `error` event, never an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import Any

from apex_ai import api_registry
from apex_ai.abort import ABORTED_MESSAGE
from apex_ai.credentials import apply_credentials, has_credentials, mark_keyless_api
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.types import AssistantMessage, Context, Model, Usage, now_ms


class _DispatchStream(AssistantMessageEventStream):
    """The stream handed to callers; it remembers what the producer pushed so the dispatcher can
    close it correctly when the producer breaks its contract."""

    def __init__(self) -> None:
        super().__init__()
        self.terminal_pushed = False
        self.last_partial: AssistantMessage | None = None

    def push(self, event: AssistantMessageEvent) -> None:
        if self.ended or self.terminal_pushed:
            return
        if isinstance(event, DoneEvent | ErrorEvent):
            self.terminal_pushed = True
        else:
            self.last_partial = event.partial
        super().push(event)


def error_message(model: Model, message: str, *, aborted: bool = False) -> AssistantMessage:
    """A failed reply for `model` with no content and zero usage."""
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="aborted" if aborted else "error",
        error_message=message,
        timestamp=now_ms(),
    )


def _push_failure(out: _DispatchStream, model: Model, message: str, *, aborted: bool = False) -> None:
    """Push the one terminal `error` event; keeps the content streamed so far if there is any."""
    if out.last_partial is not None:
        failed = out.last_partial
        failed.stop_reason = "aborted" if aborted else "error"
        failed.error_message = message
    else:
        failed = error_message(model, message, aborted=aborted)
    out.push(ErrorEvent(reason="aborted" if aborted else "error", error=failed))


async def _run(model: Model, context: Context, options: StreamOptions, out: _DispatchStream) -> None:
    try:
        if model.api not in api_registry.known_apis():
            _push_failure(out, model, f'Provider {model.provider} has no API implementation for "{model.api}"')
            return
        # The key is checked before the API module is imported: a request that cannot be sent should
        # not pay for loading an SDK.
        # Applied to a copy: the caller's options may serve another request (to another provider, say).
        applied = dataclasses.replace(options)
        apply_credentials(model, applied)
        api_key = applied.api_key
        if applied.headers != options.headers:
            options = applied  # API functions get the caller's own options when credentials add no headers
        if not has_credentials(model, options, api_key):
            _push_failure(out, model, f"No API key for provider: {model.provider}")
            return
        fn = api_registry.get_api(model.api)
        if fn is None:  # unregistered between the two calls
            _push_failure(out, model, f'Provider {model.provider} has no API implementation for "{model.api}"')
            return
        await fn(model, context, options, out, api_key)
        if not out.terminal_pushed:
            _push_failure(out, model, f'API "{model.api}" ended without a terminal event')
    except asyncio.CancelledError:
        # Cancellation is not the abort mechanism, but if it happens the consumer still gets a closed stream.
        _push_failure(out, model, ABORTED_MESSAGE, aborted=True)
        raise
    except Exception as exc:  # every failure inside the task becomes an event: stream() never raises
        aborted = options.signal is not None and options.signal.aborted
        if aborted:
            _push_failure(out, model, ABORTED_MESSAGE, aborted=True)
        else:
            _push_failure(out, model, str(exc) or type(exc).__name__)
    finally:
        out.end()


def _start(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    out = _DispatchStream()
    out.attach_task(asyncio.get_running_loop().create_task(_run(model, context, options, out)))
    return out


def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessageEventStream:
    """Stream one reply of `model` to `context`. Must be called with a running event loop.

    Returns at once; the request runs in a task held by the stream, which ends with exactly one
    `done` or `error` event. Nothing raises after this returns.
    """
    return _start(model, context, options if options is not None else StreamOptions())


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream()` with a provider-neutral `options.reasoning` level that the API maps itself."""
    return _start(model, context, options if options is not None else SimpleStreamOptions())


async def _drain(events: AssistantMessageEventStream) -> AssistantMessage:
    iterator: Any = aiter(events)  # Any: narrowed below; the stream's iterator is an async generator
    if isinstance(iterator, AsyncGenerator):
        async with contextlib.aclosing(iterator) as closing:
            async for _ in closing:
                pass
    return await events.result()


async def complete(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
    """The final message of `stream(model, context, options)`; failures come back as error messages."""
    return await _drain(stream(model, context, options))


async def complete_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessage:
    """The final message of `stream_simple(model, context, options)`."""
    return await _drain(stream_simple(model, context, options))


__all__ = [
    "ABORTED_MESSAGE",
    "complete",
    "complete_simple",
    "error_message",
    "mark_keyless_api",
    "stream",
    "stream_simple",
]
