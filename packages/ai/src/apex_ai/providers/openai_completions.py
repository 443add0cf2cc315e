"""`openai-completions`: OpenAI Chat Completions and every server that imitates it.

llama.cpp, ollama, vLLM, LM Studio, OpenRouter, Groq and friends all speak this API with small
differences, described by `CompletionsCompat` (`openai_compat.py`). The request body is built in
`openai_completions_request.py`, the stream decoded in `openai_completions_decode.py`; this module
drives one request through the `openai` SDK, which is imported on first use (~0.7 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from apex_ai.abort import AbortError
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
    plain_headers,
    race_abort,
    report_response,
    send_with_retry,
    server_label,
)
from apex_ai.providers._sse_json import sse_json
from apex_ai.providers.openai_compat import resolve_compat
from apex_ai.providers.openai_completions_decode import CompletionsDecoder
from apex_ai.providers.openai_completions_request import WireDict, build_body
from apex_ai.types import Context, Model, StopReason

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream
    from openai._legacy_response import LegacyAPIResponse
    from openai.types.chat import ChatCompletionChunk

_DONE_REASONS: dict[StopReason, Literal["stop", "length", "toolUse", "deferred"]] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "toolUse",
    "deferred": "deferred",
}


async def _open_stream(
    client: AsyncOpenAI, body: WireDict, options: StreamOptions
) -> tuple[AsyncStream[ChatCompletionChunk], int, dict[str, str]]:
    """Send the request (with provider retries); the SDK stream, status and headers of the response."""
    rest = dict(body)
    model_id = rest.pop("model")
    messages = rest.pop("messages")
    rest.pop("stream", None)

    async def send() -> LegacyAPIResponse[AsyncStream[ChatCompletionChunk]]:
        return await race_abort(
            client.chat.completions.with_raw_response.create(
                model=model_id,
                # cast: our messages are plain JSON dicts shaped like the SDK's TypedDicts.
                messages=cast("list[Any]", messages),
                stream=True,
                # Everything but the three typed keys goes through extra_body: servers get keys the SDK
                # does not know (`enable_thinking`, `thinking`, `reasoning`, ...) verbatim.
                extra_body=rest,
            ),
            options.signal,
        )

    raw = await send_with_retry(send, options, server=server_label(client.base_url))
    status = int(raw.status_code)
    return raw.parse(), status, plain_headers(raw.headers)


async def stream_openai_completions(
    model: Model,
    context: Context,
    options: StreamOptions | SimpleStreamOptions,
    out: AssistantMessageEventStream,
    api_key: str | None,
) -> None:
    """Stream one Chat Completions reply into `out` (contract: `apex_ai.api_registry.ApiStreamFn`).

    Never raises (except `CancelledError`): every failure becomes an `error` event whose message keeps
    the content and usage streamed so far.
    """
    output = new_output(model)
    signal = options.signal
    client: AsyncOpenAI | None = None
    sdk_stream: AsyncStream[ChatCompletionChunk] | None = None
    decoder: CompletionsDecoder | None = None
    try:
        compat = resolve_compat(model)
        body, provider_level = build_body(model, context, options, compat, output_token_cap(model, context, options))
        if provider_level is not None:
            output.provider_thinking_level = provider_level
        body = await apply_payload_hook(options, body, model)
        client = openai_client(model, options, api_key, None)
        sdk_stream, status, headers = await _open_stream(client, body, options)
        await report_response(options, status, headers)

        decoder = CompletionsDecoder(model, output, out, compat)
        out.push(StartEvent(partial=output))
        # The raw JSON of each chunk, not the SDK's typed models: same fields, a fraction of the cost.
        # `: ping` comments yield nothing from sse_json, so only content restarts the idle clock.
        chunks = sse_json(sdk_stream.response)
        async for chunk in iterate_until_aborted(chunks, signal, idle_seconds(options), server_label(client.base_url)):
            decoder.feed(chunk)
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)
        decoder.close_blocks()

        stop_reason, error_message = decoder.stop_reason()
        output.raw_stop_reason = decoder.finish_reason
        output.stop_reason = stop_reason
        if stop_reason == "error":
            output.error_message = error_message
            out.push(ErrorEvent(reason="error", error=output))
        else:
            out.push(DoneEvent(reason=_DONE_REASONS[stop_reason], message=output))
    except Exception as exc:
        if decoder is not None:
            decoder.drop_scratch()
        out.push(failure_event(output, signal, format_http_error(exc), exc))
    finally:
        await close_quietly(sdk_stream, client, options)
    # Ended only after a terminal event: if the task is cancelled instead, the dispatcher still gets to push one.
    out.end()


__all__ = ["ABORTED_MESSAGE", "PLACEHOLDER_API_KEY", "stream_openai_completions"]
