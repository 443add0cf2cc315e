"""Context overflow detection, estimates and the output clamp (spec ai.md §16, acceptance check 11)."""

import json

import pytest

from apex_ai.overflow import (
    MIN_OUTPUT_TOKENS,
    OUTPUT_RESERVE_TOKENS,
    ContextFullError,
    clamp_max_tokens,
    estimate_context_tokens,
    estimate_tokens,
    is_context_overflow,
    is_overflow_error_text,
    is_recoverable_length,
    output_margin,
)
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def assistant(
    stop: StopReason = "stop",
    error: str | None = None,
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    total: int = 0,
    text: str = "",
) -> AssistantMessage:
    return AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        content=[TextContent(text=text)] if text else [],
        stop_reason=stop,
        error_message=error,
        usage=Usage(input=input, output=output, cache_read=cache_read, total_tokens=total),
        timestamp=1,
    )


def test_acceptance_check_11() -> None:
    assert is_context_overflow(assistant("error", "prompt is too long: 213462 tokens > 200000 maximum"))
    assert is_context_overflow(assistant("error", "the request exceeds the available context size"))
    assert is_context_overflow(assistant("stop", input=210000), 200000)
    assert not is_context_overflow(assistant("error", "rate limit: too many tokens"))


@pytest.mark.parametrize(
    "text",
    [
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}',
        "Request_Too_Large",
        "input is too long for requested model",
        "This request exceeds the context window",
        "This model's maximum context length is 128000 tokens",
        "exceeds the model's maximum context length of 8,192 tokens",
        "exceeds maximum context length (32768)",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)",
        "maximum prompt length is 32000",
        "Please reduce the length of the messages.",
        "exceeds the maximum allowed input length of 100,000 tokens",
        "input (9000 tokens) is longer than the model's context length (8192 tokens)",
        "exceeds the limit of 4096",
        "requested tokens greater than the context length",
        "context window exceeds limit",
        "exceeded model token limit",
        "too large for model with 4096 maximum context length",
        "prompt has 9,000 tokens, but the configured context size is 8,192 tokens",
        "model_context_window_exceeded",
        "Prompt too long; exceeded max context length",
        "Range of input length should be [1, 30720]",
        "context_length_exceeded",
        "context length exceeded",
        "too many tokens in request",
        "Token limit exceeded",
        "400 status code (no body)",
        "413 (no body)",
    ],
)
def test_overflow_wordings(text: str) -> None:
    assert is_context_overflow(assistant("error", text))


@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: too many tokens",
        "Service unavailable: prompt is too long",
        "Too Many Requests: token limit exceeded",
        "529 overloaded",
        "500 status code (no body)",
        "error 400 status code (no body)",
    ],
)
def test_not_overflow(text: str) -> None:
    assert not is_context_overflow(assistant("error", text))


def test_overflow_text_needs_error_stop_reason() -> None:
    assert not is_context_overflow(assistant("stop", "prompt is too long"))
    assert not is_context_overflow(assistant("error", None))


def test_silent_overflow_rules() -> None:
    assert not is_context_overflow(assistant("stop", input=150000, cache_read=50000), 200000)
    assert is_context_overflow(assistant("stop", input=150000, cache_read=50001), 200000)
    assert not is_context_overflow(assistant("stop", input=210000))  # no window given
    assert is_context_overflow(assistant("length", input=198000, output=0), 200000)
    assert not is_context_overflow(assistant("length", input=198000, output=5), 200000)
    assert not is_context_overflow(assistant("length", input=197999, output=0), 200000)


def test_recoverable_length() -> None:
    assert is_recoverable_length(assistant("length", output=100), 4096)
    assert not is_recoverable_length(assistant("length", output=4096), 4096)
    assert not is_recoverable_length(assistant("length", output=0), 0)
    assert not is_recoverable_length(assistant("length", output=0), None)
    assert not is_recoverable_length(assistant("stop", output=10), 4096)


def test_estimate_tokens_per_message() -> None:
    assert estimate_tokens(UserMessage(content="abcde", timestamp=1)) == 2
    img = ImageContent(data="x", mime_type="image/png")
    assert estimate_tokens(UserMessage(content=[TextContent(text="abcd"), img], timestamp=1)) == 1201
    call = ToolCall(id="1", name="read", arguments={"path": "a"})
    reply = AssistantMessage(
        api="a",
        provider="p",
        model="m",
        content=[ThinkingContent(thinking="t" * 8), TextContent(text="x" * 4), call],
        stop_reason="toolUse",
        timestamp=1,
    )
    assert estimate_tokens(reply) == -(-(8 + 4 + 4 + len(json.dumps({"path": "a"}))) // 4)
    result = ToolResultMessage(tool_call_id="1", tool_name="read", content=[img], timestamp=1)
    assert estimate_tokens(result) == 1200


def test_estimate_without_usage_counts_prompt_and_tools() -> None:
    tool = Tool(name="read", description="Read a file")
    tool_chars = len(json.dumps({"name": tool.name, "description": tool.description, "parameters": tool.parameters}))
    ctx = Context(system_prompt="s" * 400, messages=[UserMessage(content="u" * 40, timestamp=1)], tools=[tool])
    assert estimate_context_tokens(ctx) == -(-(400 + tool_chars) // 4) + 10


def test_estimate_anchors_on_latest_successful_usage() -> None:
    messages = [
        SystemMessage(content="s" * 4000),
        UserMessage(content="u" * 4000, timestamp=1),
        assistant("stop", total=5000, text="done"),
        UserMessage(content="q" * 400, timestamp=2),
        assistant("error", "boom", total=9999),
        UserMessage(content="r" * 40, timestamp=3),
    ]
    assert estimate_context_tokens(Context(messages=messages)) == 5000 + 100 + 0 + 10


def test_clamp_max_tokens() -> None:
    model = Model(id="m", api="a", provider="p", context_window=20000)
    ctx = Context(messages=[UserMessage(content="x" * 40000, timestamp=1)])  # 10000 tokens
    assert clamp_max_tokens(model, ctx, 32000) == 20000 - 10000 - output_margin(20000)
    assert clamp_max_tokens(model, ctx, 1000) == 1000
    full = Context(messages=[UserMessage(content="x" * 80000, timestamp=1)])
    with pytest.raises(ContextFullError):
        clamp_max_tokens(model, full, 32000)
    no_window = model.model_copy(update={"context_window": 0})
    assert clamp_max_tokens(no_window, full, 32000) == 32000


def test_the_margin_scales_with_the_window() -> None:
    assert [output_margin(w) for w in (2048, 4096, 8192, 16384, 32768, 200000)] == [256, 512, 1024, 2048, 4096, 4096]
    assert output_margin(0) == 0 and max(output_margin(w) for w in range(0, 10**6, 997)) == OUTPUT_RESERVE_TOKENS


@pytest.mark.parametrize("window", [2048, 4096, 8192, 16384, 32768, 131072])
def test_a_clamped_cap_is_useful_or_the_request_is_refused(window: int) -> None:
    """Whatever the prompt size: either a cap of at least the floor that fits the window, or ContextFullError
    whose text is recognised as an overflow (so the agent compacts instead of sending a request that cannot
    answer)."""
    model = Model(id="m", api="a", provider="p", context_window=window, max_tokens=16384)
    for prompt_tokens in range(0, window + 200, max(1, window // 64)):
        ctx = Context(messages=[UserMessage(content="x" * (4 * prompt_tokens), timestamp=1)])
        try:
            cap = clamp_max_tokens(model, ctx, model.max_tokens)
        except ContextFullError as exc:
            assert window - prompt_tokens - output_margin(window) < MIN_OUTPUT_TOKENS
            assert str(exc).startswith(f"Context full: {prompt_tokens} of {window} tokens used")
            assert is_overflow_error_text(str(exc))
            continue
        assert MIN_OUTPUT_TOKENS <= cap <= model.max_tokens
        assert prompt_tokens + cap + output_margin(window) <= window


def test_a_caller_asking_for_less_than_the_floor_gets_it() -> None:
    model = Model(id="m", api="a", provider="p", context_window=4096)
    ctx = Context(messages=[UserMessage(content="x" * 4 * 3400, timestamp=1)])  # 184 left after the margin
    assert clamp_max_tokens(model, ctx, 100) == 100
    with pytest.raises(ContextFullError):
        clamp_max_tokens(model, ctx, 1000)
