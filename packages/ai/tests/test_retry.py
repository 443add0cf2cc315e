"""Assistant-level retry (spec ai.md §15.2, acceptance check 12)."""

import asyncio

import pytest

from apex_ai.abort import AbortController, AbortSignal
from apex_ai.retry import (
    RetryCallbacks,
    RetryPolicy,
    abortable_sleep_ms,
    is_retryable_assistant_error,
    retry_assistant_call,
)
from apex_ai.types import AssistantMessage, StopReason, TextContent, Usage


def msg(stop: StopReason = "stop", error: str | None = None, text: str = "", input: int = 0) -> AssistantMessage:
    return AssistantMessage(
        api="faux",
        provider="faux",
        model="faux-1",
        content=[TextContent(text=text)] if text else [],
        stop_reason=stop,
        error_message=error,
        usage=Usage(input=input),
        timestamp=1,
    )


class Script:
    """Returns the scripted messages in order and counts calls."""

    def __init__(self, *messages: AssistantMessage) -> None:
        self.messages = list(messages)
        self.calls = 0

    async def __call__(self) -> AssistantMessage:
        self.calls += 1
        return self.messages.pop(0)


class FakeSleep:
    """Records requested delays instead of waiting; optionally aborts during a given wait."""

    def __init__(self, abort_on: int | None = None, controller: AbortController | None = None) -> None:
        self.delays: list[int] = []
        self.abort_on = abort_on
        self.controller = controller

    async def __call__(self, delay_ms: int, signal: AbortSignal | None) -> None:
        self.delays.append(delay_ms)
        if self.controller is not None and len(self.delays) == self.abort_on:
            self.controller.abort()
            await abortable_sleep_ms(delay_ms, signal)


def test_acceptance_retryable_classification() -> None:
    assert is_retryable_assistant_error(msg("error", "529 overloaded"))
    assert not is_retryable_assistant_error(msg("error", "insufficient_quota (429)"))
    assert not is_retryable_assistant_error(msg("aborted", "Request was aborted"))


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit reached",
        "rate_limit_error",
        "503 Service Unavailable",
        "Internal server error",
        "Provider returned error",
        "Connection refused",
        "connection lost",
        "fetch failed",
        "getaddrinfo ENOTFOUND api.example.com",
        "Request timed out",
        "Anthropic stream ended before message_stop",
        "Stream ended without finish_reason",
        "OpenAI Responses stream ended before a terminal response event",
        "Server requested 120s retry delay (max: 60s). busy",
        "Please retry your request",
        "ResourceExhausted",
        "websocket closed",
    ],
)
def test_retryable_texts(text: str) -> None:
    assert is_retryable_assistant_error(msg("error", text))


@pytest.mark.parametrize(
    "text",
    [
        "Monthly usage limit reached",
        "Your credit balance is too low: check billing",
        "429 quota exceeded",
        "GoUsageLimitError: out of budget",
        "No API key for provider: anthropic",
        "Unhandled stop reason: error",
        "Provider finish_reason: content_filter",
        "The model refused to complete the request",
        "prompt is too long: 213462 tokens > 200000 maximum (500)",
    ],
)
def test_not_retryable_texts(text: str) -> None:
    assert not is_retryable_assistant_error(msg("error", text))


def test_needs_error_stop_and_message() -> None:
    assert not is_retryable_assistant_error(msg("stop", "overloaded"))
    assert not is_retryable_assistant_error(msg("error", None))


def test_policy_delays() -> None:
    policy = RetryPolicy()
    assert (policy.enabled, policy.max_retries, policy.base_delay_ms) == (True, 3, 2000)
    assert [policy.delay_ms(n) for n in (1, 2, 3)] == [2000, 4000, 8000]


async def test_acceptance_two_errors_then_success() -> None:
    success = msg(text="done")
    produce = Script(msg("error", "529 overloaded"), msg("error", "503 service unavailable"), success)
    sleep = FakeSleep()
    events: list[tuple[object, ...]] = []
    callbacks = RetryCallbacks(
        on_retry_scheduled=lambda *a: events.append(("scheduled", *a)),
        on_retry_attempt_start=lambda: events.append(("start",)),
        on_retry_finished=lambda *a: events.append(("finished", *a)),
    )
    result = await retry_assistant_call(
        produce, RetryPolicy(max_retries=3, base_delay_ms=2000), None, callbacks, sleep=sleep
    )
    assert result == success
    assert sleep.delays == [2000, 4000]
    assert produce.calls == 3
    assert events == [
        ("scheduled", 1, 3, 2000, "529 overloaded"),
        ("start",),
        ("scheduled", 2, 3, 4000, "503 service unavailable"),
        ("start",),
        ("finished", True, 2, None),
    ]


async def test_gives_up_after_max_retries() -> None:
    errors = [msg("error", f"overloaded #{n}") for n in range(4)]
    sleep = FakeSleep()
    finished: list[tuple[object, ...]] = []

    async def on_finished(*args: object) -> None:  # async callbacks are awaited
        finished.append(args)

    result = await retry_assistant_call(
        Script(*errors), RetryPolicy(), None, RetryCallbacks(on_retry_finished=on_finished), sleep=sleep
    )
    assert result == errors[3]
    assert sleep.delays == [2000, 4000, 8000]
    assert finished == [(False, 3, "overloaded #3")]


@pytest.mark.parametrize(
    ("policy", "first"),
    [
        (RetryPolicy(enabled=False), msg("error", "overloaded")),
        (RetryPolicy(max_retries=0), msg("error", "overloaded")),
        (RetryPolicy(), msg("error", "insufficient_quota")),
        (RetryPolicy(), msg("aborted", "Request was aborted")),
        (RetryPolicy(), msg("error", "context window exceeds limit; server error")),
        (RetryPolicy(), msg(text="ok")),
    ],
)
async def test_no_retry_when_disabled_not_retryable_or_overflow(policy: RetryPolicy, first: AssistantMessage) -> None:
    finished: list[tuple[object, ...]] = []
    produce = Script(first, msg(text="second"))
    sleep = FakeSleep()
    callbacks = RetryCallbacks(on_retry_finished=lambda *a: finished.append(a))
    result = await retry_assistant_call(produce, policy, None, callbacks, sleep=sleep)
    assert result == first
    assert produce.calls == 1 and sleep.delays == [] and finished == []


async def test_window_does_not_block_retry_of_non_overflow_errors() -> None:
    overflow = msg("error", "upstream connect error", input=300_000)
    produce = Script(overflow, msg(text="second"))
    assert is_retryable_assistant_error(overflow)
    result = await retry_assistant_call(produce, RetryPolicy(), None, sleep=FakeSleep(), context_window=200_000)
    # silent overflow applies to stop/length replies only; this error names no overflow, so it is retried
    assert result.content == [TextContent(text="second")]


async def test_abort_during_backoff_returns_last_message_as_aborted() -> None:
    controller = AbortController()
    first = msg("error", "overloaded", text="partial")
    produce = Script(first, msg("error", "overloaded"), msg(text="never"))
    sleep = FakeSleep(abort_on=2, controller=controller)
    finished: list[tuple[object, ...]] = []
    result = await retry_assistant_call(
        produce,
        RetryPolicy(),
        controller.signal,
        RetryCallbacks(on_retry_finished=lambda *a: finished.append(a)),
        sleep=sleep,
    )
    assert produce.calls == 2
    assert sleep.delays == [2000, 4000]
    assert result.stop_reason == "aborted"
    assert result.error_message is None
    assert "errorMessage" not in result.to_wire()
    assert finished == [(False, 2, "Retry cancelled")]


async def test_default_sleep_is_interrupted_by_abort() -> None:
    controller = AbortController()
    produce = Script(msg("error", "overloaded"), msg(text="never"))
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, controller.abort)
    started = loop.time()
    result = await retry_assistant_call(produce, RetryPolicy(base_delay_ms=60_000), controller.signal)
    assert loop.time() - started < 1
    assert result.stop_reason == "aborted" and produce.calls == 1
