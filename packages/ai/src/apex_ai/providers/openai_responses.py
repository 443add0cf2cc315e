"""`openai-responses`: the OpenAI Responses API.

The body is built in `openai_responses_request.py` and the stream decoded in
`openai_responses_decode.py`; this module drives one request through the `openai` SDK, which is
imported on first use (~0.7 s).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Literal

from apex_ai.abort import AbortError, AbortSignal
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import DoneEvent, ErrorEvent, StartEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers._openai_sdk import PLACEHOLDER_API_KEY, openai_client
from apex_ai.providers._shared import (
    ABORTED_MESSAGE,
    apply_payload_hook,
    close_quietly,
    failure_event,
    format_http_error,
    idle_seconds,
    iterate_until_aborted,
    new_output,
    output_token_cap,
    race_abort,
    report_response,
    send_with_retry,
    server_label,
)
from apex_ai.providers._sse_json import drain, sse_json
from apex_ai.providers.openai_responses_decode import ResponsesDecoder, drop_scratch, map_status
from apex_ai.providers.openai_responses_request import JsonObject, build_body
from apex_ai.types import Context, Model

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.responses import ResponseStreamEvent

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Explicit, so the SDK does not fall back to OPENAI_BASE_URL from the environment."""
NO_TERMINAL_EVENT = "OpenAI Responses stream ended before a terminal response event"


async def _open_stream(
    client: AsyncOpenAI, body: JsonObject, options: StreamOptions
) -> AsyncStream[ResponseStreamEvent]:
    rest = dict(body)
    model_id = str(rest.pop("model"))
    rest.pop("stream", None)

    async def send() -> AsyncStream[ResponseStreamEvent]:
        # Everything but the model goes through extra_body: the server gets exactly the dict that
        # on_payload saw, including keys this SDK version does not know.
        return await race_abort(client.responses.create(model=model_id, stream=True, extra_body=rest), options.signal)

    return await send_with_retry(send, options, server=server_label(client.base_url))


def error_text(exc: BaseException) -> str:
    """The errorMessage of a failed request."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        # format_http_error gives "{status} {body}"; the prefix already names the status once.
        text = format_http_error(exc)
        return f"OpenAI API error ({status}): {text.removeprefix(f'{status} ')}"
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        # An `error` event whose payload nests an `error` object: the SDK raises it without a status.
        return f"Error Code {body.get('code')}: {body.get('message')}"
    return format_http_error(exc)


async def _events(
    sdk_stream: AsyncStream[ResponseStreamEvent],
    signal: AbortSignal | None,
    idle: float | None = None,
    server: str = "",
) -> AsyncGenerator[JsonObject, None]:
    """Each server event as its raw JSON object, until the stream ends or `signal` fires.

    Read from the HTTP body, not the SDK's typed events: the decoder wants the JSON as sent, and
    building then dumping the SDK's models cost most of the time per event.
    """
    events = iterate_until_aborted(sse_json(sdk_stream.response), signal, idle, server)
    try:
        async for event in events:
            if isinstance(event, dict):  # every Responses event is an object; anything else is noise
                yield event
    finally:
        if isinstance(events, AsyncGenerator):  # stop its abort watcher now, not at garbage collection
            await events.aclose()


async def stream_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions | SimpleStreamOptions,
    out: AssistantMessageEventStream,
    api_key: str | None,
) -> None:
    """Stream one Responses reply into `out` (contract: `apex_ai.api_registry.ApiStreamFn`).

    Never raises (except `CancelledError`): every failure becomes an `error` event whose message
    keeps the content and usage streamed so far.
    """
    output = new_output(model)
    signal = options.signal
    client: AsyncOpenAI | None = None
    sdk_stream: AsyncStream[ResponseStreamEvent] | None = None
    try:
        body = build_body(model, context, options, output_token_cap(model, context, options))
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
            output.provider_thinking_level = reasoning["effort"]
        body = await apply_payload_hook(options, body, model)
        client = openai_client(model, options, api_key, DEFAULT_BASE_URL)
        sdk_stream = await _open_stream(client, body, options)
        await report_response(options, sdk_stream.response.status_code, sdk_stream.response.headers)

        tier = body.get("service_tier")
        decoder = ResponsesDecoder(model, output, out, tier if isinstance(tier, str) else None)
        out.push(StartEvent(partial=output))
        idle = idle_seconds(options)
        async with contextlib.aclosing(_events(sdk_stream, signal, idle, server_label(client.base_url))) as events:
            async for event in events:
                decoder.handle(event)
                if decoder.terminal is not None:
                    # Nothing follows a terminal event: read to the end of the body briefly (the connection can
                    # then be reused) instead of waiting for EOF as long as the server likes.
                    await drain(events)
                    break
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)
        if decoder.terminal is None:
            raise RuntimeError(NO_TERMINAL_EVENT)
        decoder.close_open_items()
        has_calls = any(block.type == "toolCall" for block in output.content)
        stop_reason, raw, message = map_status(decoder.terminal, has_calls)
        output.stop_reason = stop_reason
        output.raw_stop_reason = raw
        if stop_reason == "error":
            output.error_message = message
            out.push(ErrorEvent(reason="error", error=output))
        else:
            out.push(DoneEvent(reason=_done_reason(stop_reason), message=output))
    except Exception as exc:
        for block in output.content:
            drop_scratch(block)
        out.push(failure_event(output, signal, error_text(exc), exc))
    finally:
        await close_quietly(sdk_stream, client, options)
        out.end()


def _done_reason(stop_reason: str) -> Literal["stop", "length", "toolUse"]:
    if stop_reason == "length":
        return "length"
    return "toolUse" if stop_reason == "toolUse" else "stop"


__all__ = ["ABORTED_MESSAGE", "DEFAULT_BASE_URL", "PLACEHOLDER_API_KEY", "error_text", "stream_openai_responses"]
