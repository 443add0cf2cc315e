"""Pieces every SDK-backed API shares: error texts, the provider request retry, header merging and abort-aware stream reading.

SDK exceptions are read by duck typing (`status_code`, `response`) so this module imports no SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import inspect
import math
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from apex_ai.abort import ABORTED_MESSAGE, AbortError, AbortSignal
from apex_ai.credentials import merge_headers
from apex_ai.events import ErrorEvent
from apex_ai.options import StreamOptions
from apex_ai.overflow import clamp_max_tokens
from apex_ai.retry import RETRY_AFTER_DIAGNOSTIC
from apex_ai.types import AssistantMessage, AssistantMessageDiagnostic, CacheRetention, Context, Model, Usage, now_ms

if TYPE_CHECKING:
    import httpx2

T = TypeVar("T")

MAX_ERROR_BODY = 4000
RETRYABLE_STATUS = frozenset({408, 409, 429})


class Closable(Protocol):
    """An SDK stream or client: anything with an async `close()`."""

    async def close(self) -> None: ...


class RetryDelayTooLongError(Exception):
    """The server asked for a retry delay above `max_retry_delay_ms`: fail at once."""


class IdleTimeoutError(TimeoutError):
    """No content from the server for the idle limit (keep-alive pings do not count); retryable like a lost
    connection."""

    def __init__(self, server: str, seconds: float) -> None:
        where = f" from {server}" if server else ""
        super().__init__(f"Request timed out: no data{where} for {seconds:g} s")


def server_label(url: object) -> str:
    """`host[:port]` of a URL (an `httpx2.URL` or a string), for error texts; "" when it has none."""
    try:
        netloc = urlsplit(str(url)).netloc
    except ValueError:
        return ""
    return netloc.rpartition("@")[2]  # never show credentials a base URL may carry


def _request_server(exc: BaseException) -> str:
    """The server of the request an SDK or httpx2 error belongs to ("" if it carries no request)."""
    try:
        request = getattr(exc, "request", None)  # httpx2 raises RuntimeError for an error without one
    except RuntimeError:
        return ""
    return server_label(getattr(request, "url", "")) if request is not None else ""


def _status_and_body(exc: BaseException) -> tuple[int | None, str | None]:
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status is None and response is not None:
        status = getattr(response, "status_code", None)
    body: str | None = None
    if response is not None:
        try:
            body = response.text
        except Exception:  # a streamed response whose body was never read has no text
            body = None
    return (status if isinstance(status, int) else None), (body or None)


def truncate_body(body: str) -> str:
    if len(body) <= MAX_ERROR_BODY:
        return body
    return body[:MAX_ERROR_BODY] + f"... [truncated {len(body) - MAX_ERROR_BODY} chars]"


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def connection_error_text(exc: BaseException) -> str | None:
    """The text of a lost connection or timeout, naming its cause; None for any other exception.

    The SDKs wrap transport failures as "Connection error." / "Request timed out." with the real
    reason only in `__cause__` (e.g. "peer closed connection without sending complete message body");
    a raw `httpx2` error carries it in its own text. Either way the result starts with
    "Connection error" or "Request timed out", which the assistant-level retry recognises,
    followed by the server in parentheses when the error knows its request: "Connection error
    (127.0.0.1:8080): All connection attempts failed" tells which of several configured servers is down.
    """
    names = _class_names(exc)
    server = _request_server(exc)
    where = f" ({server})" if server else ""
    if "APIConnectionError" in names:  # the SDKs' class, and its APITimeoutError subclass
        head = str(exc).rstrip(".") or ("Request timed out" if "APITimeoutError" in names else "Connection error")
        cause = exc.__cause__ or exc.__context__
        detail = (str(cause) or type(cause).__name__) if cause is not None else ""
        return f"{head}{where}: {detail}" if detail and detail not in head else f"{head}{where}"
    if "TransportError" in names:  # httpx2's base of connection, protocol and timeout errors
        head = "Request timed out" if "TimeoutException" in names else "Connection error"
        return f"{head}{where}: {str(exc) or type(exc).__name__}"
    return None


def format_http_error(exc: BaseException) -> str:
    """`"{status} {body}"` with the raw response text, never the SDK's Python repr of it; for a lost
    connection `connection_error_text`."""
    if isinstance(exc, RetryDelayTooLongError):
        return str(exc)
    status, body = _status_and_body(exc)
    if status is not None and body:
        return f"{status} {truncate_body(body)}"
    if status is not None:
        return f"{status} status code (no body)"
    return connection_error_text(exc) or str(exc) or type(exc).__name__


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        value = headers.get(name)
    except Exception:
        return None
    return value if isinstance(value, str) else None


def _is_retryable(exc: BaseException) -> bool:
    status, _ = _status_and_body(exc)
    response = getattr(exc, "response", None)
    should = _header(getattr(response, "headers", None), "x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    if status is None:
        # No status: a connection error or timeout. Anything else (a bug of ours) is not retried.
        return type(exc).__name__ in {"APIConnectionError", "APITimeoutError"} or isinstance(
            exc, ConnectionError | TimeoutError
        )
    return status in RETRYABLE_STATUS or status >= 500


def server_retry_delay(headers: Any) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, then `retry-after` seconds or date)."""
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    after = _header(headers, "retry-after")
    if after is None:
        return None
    try:
        return max(0.0, float(after))
    except ValueError:
        pass
    try:
        when: float = email.utils.parsedate_to_datetime(after).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - time.time())


def backoff_delay(attempt: int) -> float:
    """Fallback delay of retry `attempt` (0-based): min(0.5*2^i, 8) s, minus up to 25% jitter."""
    base: float = min(0.5 * 2.0**attempt, 8.0)
    return base * (1 - random.random() * 0.25)


def plain_headers(headers: Any) -> dict[str, str]:  # Any: httpx2.Headers, a Mapping, or None
    """Response headers as a plain `dict[str, str]` (what `on_response` receives); names as the server sent them."""
    if headers is None:
        return {}
    items = getattr(headers, "items", None)
    if items is None:
        return {}
    return {str(key): str(value) for key, value in items()}


async def report_response(options: StreamOptions, status: int, headers: Any) -> None:  # Any: see plain_headers
    """Call `options.on_response(status, headers)` (sync or async) with plain dict headers."""
    if options.on_response is None:
        return
    result = options.on_response(status, plain_headers(headers))
    if inspect.isawaitable(result):
        await result


async def report_failed_response(options: StreamOptions, exc: BaseException) -> None:
    """`report_response` for an HTTP error an SDK raised, if it carries a response (connection errors do not)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int):
        await report_response(options, status, getattr(response, "headers", None))


def idle_seconds(options: StreamOptions) -> float | None:
    """The idle limit of a request in seconds; None when `idle_timeout_ms` is 0 (off)."""
    return options.idle_timeout_ms / 1000 if options.idle_timeout_ms > 0 else None


async def _within_idle_limit(send: Awaitable[T], options: StreamOptions, server: str) -> T:
    """Await `send` (up to the response headers), failing with `IdleTimeoutError` after the idle limit."""
    limit = idle_seconds(options)
    if limit is None:
        return await send
    scope = asyncio.timeout(limit)
    try:
        async with scope:
            return await send
    except TimeoutError:
        if scope.expired():
            raise IdleTimeoutError(server, limit) from None
        raise


async def send_with_retry(
    send: Callable[[], Awaitable[T]],
    options: StreamOptions,
    *,
    sleep: Callable[[float, AbortSignal | None], Awaitable[None]] | None = None,
    server: str = "",
) -> T:
    """Run `send` (one HTTP request), retrying while `options.max_retries` allow.

    Every error response is reported to `options.on_response` before it is retried or raised; the
    caller reports the successful one. A server that sends no response within the idle limit fails with
    `IdleTimeoutError` naming `server`. A retryable response asking for a longer wait than
    `max_retry_delay_ms` fails at once with `RetryDelayTooLongError`, retries left or not, so the
    assistant-level retry sees the same verdict.
    """
    attempt = 0
    while True:
        if options.signal is not None:
            options.signal.throw_if_aborted()
        try:
            return await race_abort(_within_idle_limit(send(), options, server), options.signal)
        except (AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await report_failed_response(options, exc)
            if not _is_retryable(exc):
                raise
            response = getattr(exc, "response", None)
            server_delay = server_retry_delay(getattr(response, "headers", None))
            cap_ms = options.max_retry_delay_ms
            if server_delay is not None and cap_ms > 0 and server_delay * 1000 > cap_ms:
                raise RetryDelayTooLongError(
                    f"Server requested {math.ceil(server_delay)}s retry delay "
                    f"(max: {math.ceil(cap_ms / 1000)}s). {format_http_error(exc)}"
                ) from exc
            if attempt >= options.max_retries:
                raise
            delay = server_delay if server_delay is not None else backoff_delay(attempt)
            attempt += 1
            if sleep is not None:
                await sleep(delay, options.signal)
            elif options.signal is not None:
                await options.signal.sleep(delay)
            else:
                await asyncio.sleep(delay)


async def race_abort(awaitable: Awaitable[T], signal: AbortSignal | None) -> T:
    """Await `awaitable`, but cancel it and raise `AbortError` as soon as `signal` fires.

    A request whose server never answers must still end promptly on abort.
    """
    if signal is None:
        return await awaitable
    signal.throw_if_aborted()
    work = asyncio.ensure_future(awaitable)
    abort_wait = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({work, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        work.cancel()  # our caller was cancelled: do not leave the request running behind it
        raise
    finally:
        abort_wait.cancel()
    if work.done():
        return work.result()
    work.cancel()
    try:
        await work
    except (asyncio.CancelledError, Exception):
        pass  # the request was abandoned; its own failure is not the story any more
    raise AbortError(signal.reason)


async def iterate_until_aborted(
    source: AsyncIterator[T], signal: AbortSignal | None, idle: float | None = None, server: str = ""
) -> AsyncIterator[T]:
    """Yield from `source`, racing every read against `signal`; raises `AbortError` on abort.

    With `idle` (seconds), a read that yields nothing for that long raises `IdleTimeoutError` naming
    `server`. The clock restarts with each item `source` yields, so keep-alive pings, which the SSE
    readers skip, never hold a silent stream open.

    A read is interrupted by cancelling the reading task from a timer or the signal's callback, not by
    racing each read in a task of its own: a stream yields thousands of small events, and a task plus an
    `asyncio.wait` per event tripled the cost of decoding one.
    """
    if signal is None and idle is None:
        await asyncio.sleep(0)  # the same turn of the loop before the first read as below (why: see there)
        async for item in source:
            yield item
        return
    loop = asyncio.get_running_loop()
    # What interrupted the read in progress: None while nothing did. Only a read in progress is ever
    # cancelled, so a cancellation seen with `cause` unset belongs to someone else and is passed on.
    cause: list[str] = []
    reader: list[asyncio.Task[Any]] = []
    # One idle timer for the whole stream: each read only moves `deadline`; when the timer fires early it
    # re-arms itself for the new deadline (a timer per event cost more than decoding the event).
    deadline = [0.0]
    timer: list[asyncio.TimerHandle] = []

    def interrupt(why: str) -> None:
        if reader and not cause:
            cause.append(why)
            reader[0].cancel()

    def idle_check() -> None:
        timer.clear()
        if not reader:
            return  # between reads: the next read re-arms the timer
        if loop.time() >= deadline[0]:
            interrupt("idle")
        else:
            timer.append(loop.call_at(deadline[0], idle_check))

    remove = signal.add_callback(lambda: interrupt("abort")) if signal is not None else None
    first = True
    try:
        while True:
            if first:
                # One turn of the loop before the first read: the adapter has just pushed `start` with the live
                # partial message, and the consumers (the JSON stream's `message_start`) must see it before the
                # first item fills in the response id and usage. Later items only touch what the slim wire form
                # leaves out, and a pause before every read cost a third of the decoding time.
                first = False
                await asyncio.sleep(0)
            if signal is not None and signal.aborted:
                # Aborted during that pause (typically by a consumer of the event just pushed). An item the
                # server already sent is still taken, so what it carried (the usage of `message_start`: input
                # tokens that were billed) is not lost; only a read that would have to wait is given up.
                read = asyncio.ensure_future(source.__anext__())
                await asyncio.sleep(0)
                if read.done() and read.exception() is None:
                    yield read.result()
                else:
                    read.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
                        await read  # let the source see its cancellation before the stream is closed
                raise AbortError(signal.reason)
            task = asyncio.current_task()
            assert task is not None  # an async generator always runs inside a task
            reader.append(task)
            if idle is not None:
                deadline[0] = loop.time() + idle
                if not timer:
                    timer.append(loop.call_at(deadline[0], idle_check))
            finished = False
            try:
                item = await source.__anext__()
            except StopAsyncIteration:
                finished = True
            except asyncio.CancelledError:
                if not cause:
                    raise
            finally:
                reader.clear()
            if cause:
                # Also when the source swallowed the cancellation and returned anyway: the limit was hit.
                task.uncancel()
                if cause[0] == "abort" and signal is not None:
                    raise AbortError(signal.reason)
                raise IdleTimeoutError(server, idle or 0)
            if finished:
                return
            yield item
    finally:
        if remove is not None:
            remove()
        for handle in timer:
            handle.cancel()


def timeout_seconds(options: StreamOptions, default: float = 600.0) -> float:
    return options.timeout_ms / 1000 if options.timeout_ms else default


def new_output(model: Model) -> AssistantMessage:
    """The empty assistant message an adapter streams into: no content yet, zero usage, `pending`."""
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="pending",
        timestamp=now_ms(),
    )


def failure_event(
    output: AssistantMessage, signal: AbortSignal | None, message: str, cause: BaseException | None = None
) -> ErrorEvent:
    """Mark `output` failed and wrap it in its terminal event: `aborted` when `signal` fired, else `error`.

    When `cause` is an HTTP error whose response asked for a retry delay (`retry-after-ms`/`retry-after`),
    the delay is kept as a `retryAfter` diagnostic for the assistant-level retry, which runs after the
    response is gone.
    """
    aborted = signal is not None and signal.aborted
    output.stop_reason = "aborted" if aborted else "error"
    output.error_message = ABORTED_MESSAGE if aborted else message
    if cause is not None and not aborted:
        note_retry_after(output, cause)
    return ErrorEvent(reason="aborted" if aborted else "error", error=output)


def note_retry_after(output: AssistantMessage, exc: BaseException) -> None:
    """Add a `retryAfter` diagnostic (`details.delayMs`) when the error's response named a retry delay."""
    while exc is not None and getattr(exc, "response", None) is None and exc.__cause__ is not None:
        exc = exc.__cause__  # RetryDelayTooLongError wraps the SDK error that holds the response
    response = getattr(exc, "response", None)
    delay = server_retry_delay(getattr(response, "headers", None)) if response is not None else None
    if delay is None:
        return
    diagnostic = AssistantMessageDiagnostic(
        type=RETRY_AFTER_DIAGNOSTIC, timestamp=now_ms(), details={"delayMs": math.ceil(delay * 1000)}
    )
    output.diagnostics = [*(output.diagnostics or []), diagnostic]


def output_token_cap(model: Model, context: Context, options: StreamOptions) -> int:
    """The output cap: the caller's or the model's, lowered so prompt and reply fit the window."""
    return clamp_max_tokens(model, context, options.max_tokens or model.max_tokens)


def resolve_cache_retention(options: StreamOptions) -> CacheRetention:
    """`options.cache_retention`, else `long` if APEX_CODE_CACHE_RETENTION (legacy PI_CACHE_RETENTION) says so,
    else `short`."""
    if options.cache_retention is not None:
        return options.cache_retention
    env: Mapping[str, str] = options.env or {}
    for name in ("APEX_CODE_CACHE_RETENTION", "PI_CACHE_RETENTION"):
        value = env.get(name) or os.environ.get(name)
        if value:
            return "long" if value == "long" else "short"
    return "short"


# Any: a request body is plain JSON, checked by the API, not by us.
async def apply_payload_hook(options: StreamOptions, body: dict[str, Any], model: Model) -> dict[str, Any]:
    """The body `options.on_payload` (sync or async) returns in place of `body`; `body` when it returns no dict."""
    if options.on_payload is None:
        return body
    replaced = options.on_payload(body, model)
    if inspect.isawaitable(replaced):
        replaced = await replaced
    return replaced if isinstance(replaced, dict) else body


def sdk_http_client(options: StreamOptions) -> httpx2.AsyncClient | None:
    """The HTTP client an SDK client should use: the caller's, else the caller's pool's, else None (the SDK
    client then makes one of its own, which `close_quietly` closes)."""
    if options.http_client is not None:
        return options.http_client
    return options.connection_pool.client() if options.connection_pool is not None else None


def owns_http_client(options: StreamOptions) -> bool:
    """Whether the SDK client of this request made its HTTP client itself (and must close it)."""
    return options.http_client is None and (options.connection_pool is None or options.connection_pool.closed)


async def close_quietly(sdk_stream: Closable | None, client: Closable | None, options: StreamOptions) -> None:
    """Release the HTTP response (ends the server's work on abort) and a client we created.

    The caller's own `options.http_client` or pooled connections are left open. Failures are swallowed:
    closing a broken connection may fail again, and nothing is left to save.
    """
    if sdk_stream is not None:
        try:
            await sdk_stream.close()
        except Exception:  # see the docstring
            pass
    if client is not None and owns_http_client(options):
        try:
            await client.close()
        except Exception:  # see the docstring
            pass


def strip_unpaired_surrogates(text: str) -> str:
    """Drop lone UTF-16 surrogates: they cannot be encoded as UTF-8 and break the request."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return "".join(ch for ch in text if not ("\ud800" <= ch <= "\udfff"))


__all__ = [
    "ABORTED_MESSAGE",
    "IdleTimeoutError",
    "RetryDelayTooLongError",
    "apply_payload_hook",
    "Closable",
    "backoff_delay",
    "close_quietly",
    "connection_error_text",
    "failure_event",
    "format_http_error",
    "idle_seconds",
    "iterate_until_aborted",
    "merge_headers",
    "new_output",
    "note_retry_after",
    "now_ms",
    "output_token_cap",
    "plain_headers",
    "race_abort",
    "report_failed_response",
    "report_response",
    "resolve_cache_retention",
    "send_with_retry",
    "server_label",
    "server_retry_delay",
    "strip_unpaired_surrogates",
    "timeout_seconds",
    "truncate_body",
]
