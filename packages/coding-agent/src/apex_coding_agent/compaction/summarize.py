"""One summarization request: options, retries, failure reporting.

Every summary (history, turn prefix, branch) goes through `request_summary`: a single user message with the
serialized transcript, the summarizer system prompt, caching off and a fresh routing session id, retried on
transient errors with the `retry.*` policy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from apex_agent.tool_execution import maybe_await
from apex_agent.types import StreamFn
from apex_ai.abort import AbortSignal
from apex_ai.options import CredentialStore, SimpleStreamOptions
from apex_ai.retry import RetryCallbacks, RetryPolicy, Sleep, abortable_sleep_ms, retry_assistant_call
from apex_ai.stream import complete_simple
from apex_ai.types import (
    AssistantMessage,
    Context,
    Cost,
    Model,
    TextContent,
    ThinkingLevel,
    Usage,
    UserMessage,
)
from apex_coding_agent.compaction.prompts import SUMMARIZER_SYSTEM_PROMPT
from apex_coding_agent.session.session_manager import uuid7

if TYPE_CHECKING:  # httpx2 costs ~135 ms to import; only type checkers need it here.
    import httpx2

CompleteFn: TypeAlias = Callable[[Model, Context, SimpleStreamOptions], Awaitable[AssistantMessage]]
"""`apex_ai.stream.complete_simple`'s shape: one request, its final message; failures are error messages."""

_LEVELS: dict[str, ThinkingLevel] = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}


def complete_fn_from_stream(stream_fn: StreamFn) -> CompleteFn:
    """Adapt the session's streaming function (the agent's `StreamFn`) to a `CompleteFn`."""

    async def complete(model: Model, context: Context, options: SimpleStreamOptions) -> AssistantMessage:
        events = await maybe_await(stream_fn(model, context, options))
        async for _ in events:
            pass
        return await events.result()

    return complete


@dataclass(kw_only=True)
class SummaryRequestOptions:
    """How the session calls the summarizer: its stream function, auth, thinking level, abort signal and retries.

    `complete_fn` defaults to `apex_ai.stream.complete_simple`; tests and the runtime inject another one.
    `retry_callbacks` is where the runtime hooks its `summarization_retry_*` events; `sleep` waits between retries.
    """

    complete_fn: CompleteFn = complete_simple
    api_key: str | None = None
    headers: dict[str, str | None] | None = None
    env: dict[str, str] | None = None
    credentials: CredentialStore | None = None
    http_client: httpx2.AsyncClient | None = None
    thinking_level: str = "off"
    signal: AbortSignal | None = None
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    retry_callbacks: RetryCallbacks | None = None
    sleep: Sleep = abortable_sleep_ms


FailureReason: TypeAlias = Literal["already_compacted", "nothing_to_compact", "aborted", "error", "stale"]


@dataclass(frozen=True, slots=True)
class SummaryFailure:
    """A summary that was not produced; nothing was changed. `message` is user-facing."""

    reason: FailureReason
    message: str


class SummarizationError(Exception):
    """Raised inside this package when a request ends in `error` or `aborted`; turned into a `SummaryFailure`."""

    def __init__(self, message: str, *, aborted: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.aborted = aborted

    def to_failure(self) -> SummaryFailure:
        return SummaryFailure("aborted" if self.aborted else "error", self.message)


@dataclass(frozen=True, slots=True)
class SummaryText:
    text: str
    usage: Usage


def summary_max_tokens(model: Model, budget: int) -> int:
    """`budget` capped by the model's output limit when it declares one."""
    return min(budget, model.max_tokens) if model.max_tokens > 0 else budget


PROMPT_OVERHEAD_TOKENS = 2000
"""Room for the system prompt, the instructions and the wrapping tags of a summary request (an eighth of a
smaller window: they take about 450 tokens)."""
CHARS_PER_TOKEN_SAFE = 3
"""Code and logs tokenize denser than the 4 chars/token of the estimates; budgets use 3 to stay inside."""


def input_char_budget(model: Model, max_tokens: int, other_text: str = "") -> int | None:
    """Characters of transcript one request to `model` can carry next to `other_text` (e.g. the previous
    summary) and `max_tokens` of output; None when the model declares no window."""
    if model.context_window <= 0:
        return None
    overhead = min(PROMPT_OVERHEAD_TOKENS, model.context_window // 8)
    tokens = model.context_window - max_tokens - overhead - len(other_text) // CHARS_PER_TOKEN_SAFE
    return max(0, tokens) * CHARS_PER_TOKEN_SAFE


def add_usage(a: Usage | None, b: Usage | None) -> Usage | None:
    """Field-by-field sum (cost included; optional fields stay None only when both are None)."""
    if a is None or b is None:
        return a or b

    def opt(x: int | None, y: int | None) -> int | None:
        return None if x is None and y is None else (x or 0) + (y or 0)

    return Usage(
        input=a.input + b.input,
        output=a.output + b.output,
        cache_read=a.cache_read + b.cache_read,
        cache_write=a.cache_write + b.cache_write,
        cache_write_1h=opt(a.cache_write_1h, b.cache_write_1h),
        reasoning=opt(a.reasoning, b.reasoning),
        total_tokens=a.total_tokens + b.total_tokens,
        cost=Cost(
            input=a.cost.input + b.cost.input,
            output=a.cost.output + b.cost.output,
            cache_read=a.cost.cache_read + b.cost.cache_read,
            cache_write=a.cost.cache_write + b.cost.cache_write,
            total=a.cost.total + b.cost.total,
        ),
    )


def _request_options(
    model: Model, options: SummaryRequestOptions, max_tokens: int, *, use_reasoning: bool
) -> SimpleStreamOptions:
    level = _LEVELS.get(options.thinking_level) if use_reasoning and model.reasoning else None
    return SimpleStreamOptions(
        signal=options.signal,
        api_key=options.api_key,
        headers=options.headers,
        env=options.env,
        credentials=options.credentials,
        http_client=options.http_client,
        max_tokens=max_tokens,
        # A summary prompt is never sent twice: caching it would only pay the cache-write premium.
        cache_retention="none",
        session_id=uuid7(),
        reasoning=level,
    )


async def request_summary(
    model: Model,
    prompt: str,
    max_tokens: int,
    options: SummaryRequestOptions,
    *,
    failure_prefix: str,
    use_reasoning: bool = True,
) -> SummaryText:
    """Ask `model` for a summary of `prompt`. Raises `SummarizationError` (`failure_prefix` + error text) when the
    final reply is an error, or with `aborted=True` when the signal fired."""
    context = Context(
        system_prompt=SUMMARIZER_SYSTEM_PROMPT,
        messages=[UserMessage(content=[TextContent(text=prompt)], timestamp=0)],
    )
    request = _request_options(model, options, max_tokens, use_reasoning=use_reasoning)

    async def produce() -> AssistantMessage:
        return await options.complete_fn(model, context, request)

    reply = await retry_assistant_call(
        produce,
        options.retry_policy,
        options.signal,
        options.retry_callbacks,
        sleep=options.sleep,
        context_window=model.context_window,
    )
    if reply.stop_reason == "aborted" or (options.signal is not None and options.signal.aborted):
        raise SummarizationError(f"{failure_prefix}: aborted", aborted=True)
    if reply.stop_reason == "error":
        raise SummarizationError(f"{failure_prefix}: {reply.error_message or 'Unknown error'}")
    text = "\n".join(block.text for block in reply.content if isinstance(block, TextContent))
    return SummaryText(text, reply.usage)


__all__ = [
    "CompleteFn",
    "FailureReason",
    "SummarizationError",
    "SummaryFailure",
    "SummaryRequestOptions",
    "SummaryText",
    "add_usage",
    "input_char_budget",
    "complete_fn_from_stream",
    "request_summary",
    "summary_max_tokens",
]
