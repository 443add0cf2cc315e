"""Token accounting for compaction: per-message estimates, the context estimate anchored
on the last valid usage report, and the threshold test.

Estimates are `ceil(chars / 4)`; an image counts 4800 chars. Lengths are Python `len()` (code points), where the
reference counts UTF-16 units; the difference is accepted by the spec.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from apex_agent.messages import AgentMessage
from apex_ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from apex_coding_agent.compaction.settings import CompactionSettings
from apex_coding_agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)

IMAGE_CHARS = 4800


# One encoder for all calls: `json.dumps` with non-default options builds a new encoder every time.
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode


def js_json(value: object) -> str:
    """Compact JSON as JavaScript's `JSON.stringify` writes it (no spaces, non-ASCII kept)."""
    return _ENCODE(value)


def context_tokens(usage: Usage) -> int:
    """Window tokens one request occupied: `totalTokens`, else the sum of its parts."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def has_valid_usage(message: AgentMessage) -> bool:
    """An assistant reply that completed (not aborted/error) and reports a non-zero context size."""
    return (
        isinstance(message, AssistantMessage)
        and message.stop_reason not in ("aborted", "error")
        and context_tokens(message.usage) > 0
    )


def _content_chars(content: str | Iterable[object]) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ImageContent):
            chars += IMAGE_CHARS
    return chars


def message_chars(message: AgentMessage) -> int:
    """The characters `estimate_tokens` counts for `message` (table; other roles count 0)."""
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextContent):
                chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                chars += len(block.thinking)
            elif isinstance(block, ToolCall):
                chars += len(block.name) + len(js_json(block.arguments))
        return chars
    if isinstance(message, UserMessage | ToolResultMessage | CustomMessage):
        return _content_chars(message.content)
    if isinstance(message, BashExecutionMessage):
        return len(message.command) + len(message.output)
    if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
        return len(message.summary)
    return 0


def estimate_tokens(message: AgentMessage) -> int:
    """`ceil(chars / 4)` of one message."""
    return math.ceil(message_chars(message) / 4)


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """The estimated context size: usage of the last valid reply plus estimates of the messages after it."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def estimate_context_tokens(messages: Sequence[AgentMessage]) -> ContextEstimate:
    """Estimate the tokens `messages` occupy: anchored on the last valid usage report, or all estimated."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and has_valid_usage(message):
            usage_tokens = context_tokens(message.usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    trailing = sum(estimate_tokens(m) for m in messages)
    return ContextEstimate(trailing, 0, trailing, None)


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """Threshold rule: compaction is due once the context exceeds `context_window - reserve`, with the reserve
    scaled to the window (`CompactionSettings.for_window`).

    Always False when automatic compaction is disabled or the window is unknown (0).
    """
    if not settings.enabled or context_window <= 0:
        return False
    return context_tokens > context_window - settings.for_window(context_window).reserve_tokens


__all__ = [
    "IMAGE_CHARS",
    "ContextEstimate",
    "context_tokens",
    "estimate_context_tokens",
    "estimate_tokens",
    "has_valid_usage",
    "js_json",
    "message_chars",
    "should_compact",
]
