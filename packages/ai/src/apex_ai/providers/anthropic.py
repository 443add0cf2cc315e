"""The `anthropic-messages` API: one streamed Messages API request per reply.

The `anthropic` SDK (~1.5 s to import) is imported inside `stream_anthropic`, on first use.
Body building lives in `anthropic_request`, event decoding in `anthropic_decode`.
"""

from __future__ import annotations

import codecs
import functools
import json
import warnings
from collections.abc import AsyncIterator, Coroutine, Generator, Iterator
from typing import TYPE_CHECKING, Any, Final, TypeVar

from apex_ai.abort import AbortError
from apex_ai.env_api_keys import is_anthropic_oauth_token
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import DoneEvent, StartEvent
from apex_ai.options import SimpleStreamOptions, StreamOptions
from apex_ai.providers._shared import (
    ABORTED_MESSAGE,
    apply_payload_hook,
    failure_event,
    format_http_error,
    idle_seconds,
    iterate_until_aborted,
    merge_headers,
    new_output,
    owns_http_client,
    report_response,
    sdk_http_client,
    send_with_retry,
    server_label,
    timeout_seconds,
)
from apex_ai.providers.anthropic_decode import AnthropicDecoder, StreamDecodeError
from apex_ai.providers.anthropic_request import CLAUDE_CODE_VERSION, build_request
from apex_ai.types import Context, Model

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic, AsyncStream
    from anthropic._streaming import ServerSentEvent, SSEBytesDecoder, SSEDecoder
    from anthropic.types import RawMessageStreamEvent

DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
_CORE_KEYS: Final = frozenset({"model", "messages", "max_tokens", "stream"})
_SDK_MODEL_WARNING: Final = r"The model '.*' is deprecated"
"""The SDK's DeprecationWarning for catalog models nearing end-of-life (claude-sonnet-4-5, claude-opus-4-5)."""

T = TypeVar("T")


class _QuietStart:
    """Await an SDK coroutine with its model-deprecation warning ignored while its first step runs.

    The SDK warns synchronously at the top of `messages.create`, before its first suspension. The
    filter must not stay installed across an await: `warnings.catch_warnings` swaps the process-wide
    filter list (Python 3.11), so overlapping requests would restore each other's state. Running only
    the first step under it keeps the change invisible to every other task. Under `-W error` (pytest's
    `filterwarnings = error`) the warning would otherwise become an exception and fail the request.
    """

    def __init__(self, coro: Coroutine[Any, Any, T]) -> None:  # Any: the SDK coroutine's yield/send types
        self._coro = coro

    def __await__(self) -> Generator[Any, Any, T]:  # Any: whatever the event loop passes through
        coro = self._coro
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=_SDK_MODEL_WARNING, category=DeprecationWarning)
                yielded = coro.send(None)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]  # the coroutine's own result, typed T
        # The rest is what `yield from coro` would do: pass every value and exception through.
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # forwarded into the coroutine, as `yield from` does
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                continue
            try:
                yielded = coro.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


def _default_headers(betas: list[str], *, oauth: bool) -> dict[str, str]:
    headers: dict[str, str] = {}
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    if oauth:
        # An OAuth token is only accepted from a client that identifies as Claude Code.
        headers["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION} (external, cli)"
        headers["x-app"] = "cli"
    return headers


def _stream_error_text(exc: BaseException) -> str:
    """The errorMessage of a failure after the response started (SSE `error` event, bad JSON, lost connection)."""
    if isinstance(exc, StreamDecodeError):
        return str(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"Malformed Anthropic stream event: {exc}"
    body = getattr(exc, "body", None)
    if isinstance(body, dict | list):
        # An SSE `error` event: its JSON text, as the server sent it (compact, like JSON.stringify).
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    if isinstance(body, str) and body:
        return body
    return format_http_error(exc)


def sdk_base_url(base_url: str | None) -> str:
    """The server root the SDK wants: it appends `/v1/messages` itself, so a trailing `/v1` is dropped.

    Both `http://host:8080` and `http://host:8080/v1` name the same server (OpenAI-style configs use the
    second form); without this the second one requests `/v1/v1/messages` and gets a bare 404.
    """
    url = (base_url or DEFAULT_BASE_URL).rstrip("/")
    return url.removesuffix("/v1") or url


async def _valid_utf8(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`chunks` with each invalid UTF-8 sequence replaced by U+FFFD (as the OpenAI adapters read text)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # keeps a character split across chunks
    async for chunk in chunks:
        yield decoder.decode(chunk).encode("utf-8")
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail.encode("utf-8")


def _valid_utf8_sync(chunks: Iterator[bytes]) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in chunks:
        yield decoder.decode(chunk).encode("utf-8")
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail.encode("utf-8")


class _ReplacingDecoder:
    """The SDK's SSE decoder fed with valid UTF-8: it decodes each line strictly, so one bad byte from a
    server or proxy would otherwise end the whole reply with `'utf-8' codec can't decode`."""

    def __init__(self, inner: SSEDecoder | SSEBytesDecoder) -> None:
        self._inner = inner

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[ServerSentEvent]:
        return self._inner.iter_bytes(_valid_utf8_sync(iterator))

    def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        return self._inner.aiter_bytes(_valid_utf8(iterator))


@functools.cache
def _client_class() -> type[AsyncAnthropic]:
    """`AsyncAnthropic` with a UTF-8-repairing SSE decoder, made on first use (the SDK is imported lazily)."""
    from anthropic import AsyncAnthropic  # lazy: the SDK costs ~1.5 s to import

    class ReplacingAsyncAnthropic(AsyncAnthropic):
        def _make_sse_decoder(self) -> SSEDecoder | SSEBytesDecoder:
            # The SDK's own hook for another stream decoder (its Bedrock client uses it too).
            return _ReplacingDecoder(super()._make_sse_decoder())

    return ReplacingAsyncAnthropic


def _make_client(model: Model, options: StreamOptions, api_key: str | None, headers: dict[str, str]) -> AsyncAnthropic:
    oauth = is_anthropic_oauth_token(api_key)
    # Without a key the caller authenticates through its own header; an empty key keeps the SDK
    # from looking for credentials in the environment or on disk.
    return _client_class()(
        api_key=None if oauth else (api_key or ""),
        auth_token=api_key if oauth else None,
        base_url=sdk_base_url(model.base_url),
        http_client=sdk_http_client(options),
        max_retries=0,
        default_headers=headers,
        timeout=timeout_seconds(options),
    )


async def stream_anthropic(
    model: Model,
    context: Context,
    options: StreamOptions | SimpleStreamOptions,
    out: AssistantMessageEventStream,
    api_key: str | None,
) -> None:
    """Stream one Messages API reply into `out` (contract: `apex_ai.api_registry.ApiStreamFn`).

    Pushes `start` once the server accepted the request, block events while it streams, then one
    `done` or `error` event. An abort keeps the partial content and usage (`stopReason: aborted`).
    """
    from anthropic import omit  # lazy: see the module docstring

    oauth = is_anthropic_oauth_token(api_key)
    request = build_request(model, context, options, oauth=oauth)
    output = new_output(model)
    output.provider_thinking_level = request.provider_level
    body = await apply_payload_hook(options, request.body, model)
    headers = merge_headers(model, options, _default_headers(request.betas, oauth=oauth))
    extra_headers: dict[str, Any] = {}  # Any: header values or the SDK's `omit` marker
    if api_key is None and "authorization" not in {key.lower() for key in headers}:
        # Without a key the caller authenticates by x-api-key: drop the SDK's empty bearer header.
        extra_headers["Authorization"] = omit
    client = _make_client(model, options, api_key, headers)
    rest = {key: value for key, value in body.items() if key not in _CORE_KEYS}

    async def send() -> AsyncStream[RawMessageStreamEvent]:
        return await _QuietStart(
            client.messages.create(
                model=body["model"],
                messages=body["messages"],
                max_tokens=body["max_tokens"],
                stream=True,
                extra_body=rest,
                extra_headers=extra_headers,
            )
        )

    server = server_label(client.base_url)
    try:
        try:
            sdk_stream = await send_with_retry(send, options, server=server)
        except Exception as exc:  # send_with_retry has reported an error response to on_response
            message = ABORTED_MESSAGE if isinstance(exc, AbortError) else format_http_error(exc)
            out.push(failure_event(output, options.signal, message, exc))
            return
        await report_response(options, sdk_stream.response.status_code, sdk_stream.response.headers)
        out.push(StartEvent(partial=output))
        decoder = AnthropicDecoder(model=model, output=output, out=out, tools=request.tools, oauth=oauth)
        try:
            # The SDK skips `ping` events, so only content restarts the idle clock.
            async for event in iterate_until_aborted(sdk_stream, options.signal, idle_seconds(options), server):
                decoder.handle(event)
            if options.signal is not None:
                options.signal.throw_if_aborted()
            decoder.finish()
        except Exception as exc:
            out.push(failure_event(output, options.signal, _stream_error_text(exc)))
            return
        finally:
            await sdk_stream.close()
        reason = output.stop_reason
        if reason in ("stop", "length", "toolUse"):
            out.push(DoneEvent(reason=reason, message=output))
        else:  # finish() has ruled this out; a wrong terminal event would be worse than a clear error
            out.push(failure_event(output, options.signal, f"Unexpected stop reason: {reason}"))
    finally:
        if owns_http_client(options):
            await client.close()  # a client we made owns its connections; the caller's (or its pool's) stay open


__all__ = ["ABORTED_MESSAGE", "sdk_base_url", "stream_anthropic"]
