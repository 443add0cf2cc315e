"""Assistant-level retry of a whole model request.

Provider retries happen before any event is streamed. This layer sits above them: when a
finished request ended in a transient error (overload, rate limit, dropped connection), it waits
`base · 2^(n−1)` ms and asks for a fresh response. Quota and billing errors, aborts and context
overflows are never retried: waiting cannot fix them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from apex_ai.abort import AbortError, AbortSignal, sleep_abortable
from apex_ai.overflow import is_context_overflow
from apex_ai.types import AssistantMessage

_NOT_RETRYABLE = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|insufficient_quota"
    r"|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
_RETRYABLE = re.compile(
    "|".join(
        [
            r"overloaded",
            r"rate.?limit",
            r"too many requests",
            r"429|500|502|503|504|524",
            r"service.?unavailable",
            r"server.?error",
            r"internal.?error",
            r"provider.?returned.?error",
            r"network.?error",
            # The spec writes `connection.?error|refused|lost` and `websocket.?closed|error` as shorthand; read
            # literally, any text with "error" or "refused" (a model refusal) would be retried.
            r"connection.?(?:error|refused|lost)",
            r"other side closed",
            r"fetch failed",
            r"getaddrinfo",
            r"ENOTFOUND",
            r"EAI_AGAIN",
            r"upstream.?connect",
            r"reset before headers",
            r"socket hang up",
            r"socket connection was closed",
            r"timed? out",
            r"timeout",
            r"terminated",
            r"websocket.?(?:closed|error)",
            r"ended without",
            r"stream ended before message_stop",
            r"stream ended before a terminal response event",
            r"http2 request did not get a response",
            r"retry delay",
            r"you can retry your request",
            r"try your request again",
            r"please retry your request",
            r"ResourceExhausted",
        ]
    ),
    re.IGNORECASE,
)

RETRY_CANCELLED = "Retry cancelled"
RETRY_AFTER_DIAGNOSTIC = "retryAfter"
"""Diagnostic type of a failed reply whose server asked for a retry delay; `details: {"delayMs": int}`."""


def server_retry_delay_ms(message: AssistantMessage) -> int | None:
    """The retry delay the server asked for with the failed reply (`retry-after`), if it asked."""
    for diagnostic in reversed(message.diagnostics or []):
        if diagnostic.type != RETRY_AFTER_DIAGNOSTIC or not isinstance(diagnostic.details, dict):
            continue
        delay = diagnostic.details.get("delayMs")
        if isinstance(delay, int | float) and not isinstance(delay, bool) and delay >= 0:
            return int(delay)
    return None


def is_retryable_error_text(text: str) -> bool:
    """Whether an error text names a transient failure (quota and billing texts never do)."""
    return not _NOT_RETRYABLE.search(text) and bool(_RETRYABLE.search(text))


def is_retryable_assistant_error(message: AssistantMessage, context_window: int | None = None) -> bool:
    """An `error` reply with a transient error text that is not a context overflow."""
    if message.stop_reason != "error" or not message.error_message:
        return False
    if is_context_overflow(message, context_window):
        return False  # a longer wait leaves the prompt just as long; compaction handles this
    return is_retryable_error_text(message.error_message)


@dataclass(frozen=True)
class RetryPolicy:
    """Retry up to `max_retries` times, waiting `base_delay_ms · 2^(n−1)` before retry n (no jitter), or as long
    as the server asked (`retry-after`) when that is at most `max_delay_ms` (0: no limit)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60000

    def delay_ms(self, attempt: int) -> int:
        """Wait before retry number `attempt` (1-based): 2000, 4000, 8000 ms by default."""
        return self.base_delay_ms * (1 << max(0, attempt - 1))

    def wait_ms(self, attempt: int, failed: AssistantMessage) -> int | None:
        """Wait before retry `attempt` of `failed`: the server's delay if it named one, else the backoff.

        None when the server asked for longer than `max_delay_ms`: waiting that long is not a retry worth
        making (a quota that resets tomorrow), so the failure stands.
        """
        asked = server_retry_delay_ms(failed)
        if asked is None:
            return self.delay_ms(attempt)
        if self.max_delay_ms > 0 and asked > self.max_delay_ms:
            return None
        return asked


# Callbacks may be plain functions or coroutine functions: a returned awaitable is awaited, any other value ignored.
MaybeAwaitable = object


@dataclass
class RetryCallbacks:
    """Progress hooks, e.g. for a "retrying in 4 s" status line.

    `on_retry_scheduled(attempt, max_retries, delay_ms, error_message)` before each wait,
    `on_retry_attempt_start()` just before each new request, and
    `on_retry_finished(success, attempt, final_error)` once at the end, only if a retry was scheduled.
    """

    on_retry_scheduled: Callable[[int, int, int, str], MaybeAwaitable] | None = None
    on_retry_attempt_start: Callable[[], MaybeAwaitable] | None = None
    on_retry_finished: Callable[[bool, int, str | None], MaybeAwaitable] | None = None


Sleep = Callable[[int, AbortSignal | None], Awaitable[None]]
"""`(delay_ms, signal)`: wait, raising `AbortError` (or returning early) when the signal fires."""


async def abortable_sleep_ms(delay_ms: int, signal: AbortSignal | None) -> None:
    """The default `Sleep`: a real sleep that ends with `AbortError` when `signal` fires."""
    await sleep_abortable(delay_ms / 1000, signal)


async def _call(callback: Callable[..., MaybeAwaitable] | None, *args: object) -> None:
    if callback is None:
        return
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


def _aborted(message: AssistantMessage) -> AssistantMessage:
    return message.model_copy(update={"stop_reason": "aborted", "error_message": None})


async def retry_assistant_call(
    produce: Callable[[], Awaitable[AssistantMessage]],
    policy: RetryPolicy | None = None,
    signal: AbortSignal | None = None,
    callbacks: RetryCallbacks | None = None,
    *,
    sleep: Sleep = abortable_sleep_ms,
    context_window: int | None = None,
) -> AssistantMessage:
    """Call `produce` until it returns a non-retryable message or the retries are used up.

    Returns the last message. An abort during a backoff wait returns the last message with
    stopReason `aborted` and no error message (on_retry_finished gets success False and
    "Retry cancelled"). `produce` must not raise; failures are assistant messages.
    """
    policy = policy or RetryPolicy()
    callbacks = callbacks or RetryCallbacks()
    message = await produce()
    attempt = 0
    while (
        policy.enabled
        and attempt < policy.max_retries
        and is_retryable_assistant_error(message, context_window)
        and not (signal is not None and signal.aborted)
    ):
        delay = policy.wait_ms(attempt + 1, message)
        if delay is None:
            break
        attempt += 1
        await _call(callbacks.on_retry_scheduled, attempt, policy.max_retries, delay, message.error_message or "")
        try:
            await sleep(delay, signal)
        except AbortError:
            pass
        if signal is not None and signal.aborted:
            await _call(callbacks.on_retry_finished, False, attempt, RETRY_CANCELLED)
            return _aborted(message)
        await _call(callbacks.on_retry_attempt_start)
        message = await produce()
    if attempt > 0:
        success = message.stop_reason not in ("error", "aborted")
        await _call(callbacks.on_retry_finished, success, attempt, None if success else message.error_message)
    return message


__all__ = [
    "RETRY_AFTER_DIAGNOSTIC",
    "RETRY_CANCELLED",
    "RetryCallbacks",
    "RetryPolicy",
    "Sleep",
    "abortable_sleep_ms",
    "is_retryable_assistant_error",
    "is_retryable_error_text",
    "retry_assistant_call",
    "server_retry_delay_ms",
]
