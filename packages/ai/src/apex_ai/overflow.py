"""Context overflow detection, token estimates and the output-token clamp.

Providers report an over-long prompt in many wordings, and some (local servers) silently cut the
prompt instead. The agent layer uses `is_context_overflow` to decide on compaction instead of a
retry, and adapters use `clamp_max_tokens` so prompt + output still fit the window.

The clamp keeps a safety margin for estimate error that scales with the window
(`output_margin`: an eighth of it, at most 4096) and refuses to send a request whose reply could
not reach `MIN_OUTPUT_TOKENS`; the formulas are in the README, section *Local models*.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Protocol

from apex_ai.transcript import normalize_context, render_system_prompt
from apex_ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

IMAGE_CHARS = 4800
"""An image counts as this many characters (1200 tokens) in estimates."""
OUTPUT_RESERVE_TOKENS = 4096
"""The largest margin kept free between the estimated prompt and the window when clamping output tokens."""
MIN_OUTPUT_TOKENS = 256
"""The smallest useful reply: a request whose output cap would fall below it is not sent."""

_OVERFLOW = re.compile(
    "|".join(
        [
            r"prompt is too long",
            r"request_too_large",
            r"input is too long for requested model",
            r"exceeds the context window",
            r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
            r"input token count.*exceeds the maximum",
            r"maximum prompt length is \d+",
            r"reduce the length of the messages",
            r"maximum context length is \d+ tokens",
            r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
            r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
            r"exceeds the limit of \d+",
            r"exceeds the available context size",
            r"greater than the context length",
            r"context window exceeds limit",
            r"exceeded model token limit",
            r"too large for model with \d+ maximum context length",
            r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
            r"model_context_window_exceeded",
            r"prompt too long; exceeded (?:max )?context length",
            r"range of input length should be",
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
            r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
            r"context full: [\d,]+ of [\d,]+ tokens used",  # ContextFullError: the request was never sent
        ]
    ),
    re.IGNORECASE,
)
# Throttling texts can mention tokens ("rate limit: too many tokens per minute") without any overflow.
_NOT_OVERFLOW = re.compile(r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE)


def is_overflow_error_text(text: str) -> bool:
    """Whether a provider error text says the prompt did not fit the context window."""
    return bool(_OVERFLOW.search(text)) and not _NOT_OVERFLOW.search(text)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether `message` failed, or silently degraded, because its prompt exceeded the window.

    True for an `error` whose text names an overflow; and, when `context_window` is given, for a
    `stop` whose prompt (input + cache reads) exceeds the window, or a `length` with no output
    whose prompt filled at least 99% of it.
    """
    usage = message.usage
    if message.stop_reason == "error" and message.error_message and is_overflow_error_text(message.error_message):
        return True
    if context_window is None or context_window <= 0:
        return False
    prompt = usage.input + usage.cache_read
    if message.stop_reason == "stop" and prompt > context_window:
        return True
    return message.stop_reason == "length" and usage.output == 0 and prompt >= 0.99 * context_window


def is_recoverable_length(message: AssistantMessage, desired: int | None) -> bool:
    """A `length` stop that produced fewer tokens than wanted (`desired`: the cap before clamping)."""
    return message.stop_reason == "length" and desired is not None and desired > 0 and message.usage.output < desired


# --------------------------------------------------------------------------- estimates


class _HasRole(Protocol):
    @property
    def role(self) -> str: ...


def _tool_chars(tools: Iterable[Tool]) -> int:
    return sum(
        len(json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters})) for t in tools
    )


def _blocks_chars(blocks: Iterable[object]) -> int:
    chars = 0
    for block in blocks:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ImageContent):
            chars += IMAGE_CHARS
        elif isinstance(block, ThinkingContent):
            chars += len(block.thinking)
        elif isinstance(block, ToolCall):
            chars += len(block.name) + len(json.dumps(block.arguments, default=str))
    return chars


def _message_chars(message: _HasRole) -> int:
    if isinstance(message, SystemMessage):
        return len(render_system_prompt(message)) + _tool_chars(message.tools_added or [])
    if isinstance(message, UserMessage):
        return len(message.content) if isinstance(message.content, str) else _blocks_chars(message.content)
    if isinstance(message, AssistantMessage | ToolResultMessage):
        return _blocks_chars(message.content or [])
    # Custom roles of higher layers: count whatever text they carry.
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return len(content)
    return _blocks_chars(content) if isinstance(content, list) else 0


def estimate_tokens(message: _HasRole) -> int:
    """Rough token count of one message: ceil(characters / 4), an image counting 4800 characters."""
    return math.ceil(_message_chars(message) / 4)


def usage_context_tokens(usage: Usage) -> int:
    """Tokens a completed request occupied in the window (its total, or the sum of the parts)."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def estimate_context_tokens(context: Context) -> int:
    """Tokens the next request of `context` will occupy.

    Anchored on the latest successful assistant message that reports usage (its total covers the
    system prompt, tools and everything before it) plus estimates of the messages after it;
    without one, everything is estimated, the system prompt and tool declarations included.
    """
    messages = normalize_context(context).messages
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("error", "aborted")
            and usage_context_tokens(message.usage) > 0
        ):
            return usage_context_tokens(message.usage) + sum(estimate_tokens(m) for m in messages[index + 1 :])
    return sum(estimate_tokens(m) for m in messages)


class ContextFullError(ValueError):
    """The prompt leaves no room for a useful reply; the request must not be sent.

    Its text starts with `Context full: N of M tokens used`, which `is_context_overflow` recognises, so
    the agent layer compacts instead of retrying.
    """

    def __init__(self, used: int, window: int, needed: int, margin: int) -> None:
        super().__init__(
            f"Context full: {used} of {window} tokens used; a reply needs {needed} more tokens plus a "
            f"{margin}-token safety margin. Compact the session or use a model with a larger context window."
        )
        self.used = used
        self.window = window
        self.needed = needed
        self.margin = margin


def output_margin(context_window: int) -> int:
    """Tokens kept free for estimate error: an eighth of the window, at most `OUTPUT_RESERVE_TOKENS`."""
    return min(OUTPUT_RESERVE_TOKENS, max(0, context_window) // 8)


def clamp_max_tokens(model: Model, context: Context, max_tokens: int) -> int:
    """`max_tokens` lowered so prompt + output + `output_margin(window)` fit the window.

    Unchanged when the model declares no window (0). Raises `ContextFullError` when what is left is
    below `MIN_OUTPUT_TOKENS` (or below `max_tokens` itself when the caller asked for less): such a
    request could only produce a cut-off reply.
    """
    window = model.context_window
    if window <= 0:
        return max_tokens
    used = estimate_context_tokens(context)
    margin = output_margin(window)
    room = window - used - margin
    needed = min(MIN_OUTPUT_TOKENS, max(max_tokens, 1))
    if room < needed:
        raise ContextFullError(used, window, needed, margin)
    return min(max_tokens, room)


__all__ = [
    "IMAGE_CHARS",
    "MIN_OUTPUT_TOKENS",
    "OUTPUT_RESERVE_TOKENS",
    "ContextFullError",
    "clamp_max_tokens",
    "estimate_context_tokens",
    "estimate_tokens",
    "is_context_overflow",
    "is_overflow_error_text",
    "is_recoverable_length",
    "output_margin",
    "usage_context_tokens",
]
