"""Plain-text rendering of a conversation for the summarizer (spec compaction.md §6).

The summarizer gets the transcript as text inside one user message, not as real turns: that way it reads
the conversation instead of continuing it, and tool calls need no matching tool declarations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from apex_agent.messages import AgentMessage
from apex_ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from apex_coding_agent.compaction.tokens import js_json
from apex_coding_agent.messages import convert_to_llm

TOOL_RESULT_MAX_CHARS = 2000


def _text_of(content: str | Iterable[object]) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def truncate_tool_output(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    """`text` cut to `limit` chars with a note saying how many were dropped."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {len(text) - limit} more characters truncated]"


def _tool_call_text(call: ToolCall) -> str:
    args = ", ".join(f"{key}={js_json(value)}" for key, value in call.arguments.items())
    return f"{call.name}({args})"


def _assistant_parts(message: AssistantMessage) -> list[str]:
    thinking: list[str] = []
    texts: list[str] = []
    calls: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ThinkingContent):
            thinking.append(block.thinking)
        elif isinstance(block, ToolCall):
            calls.append(_tool_call_text(block))
    parts: list[str] = []
    if thinking:
        parts.append("[Assistant thinking]: " + "\n".join(thinking))
    if texts:
        parts.append("[Assistant]: " + "\n".join(texts))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def serialize_llm_messages(messages: Iterable[Message]) -> str:
    """Provider messages as `[User]: ...`, `[Assistant ...]: ...`, `[Tool result]: ...` blocks joined by a blank
    line. Empty user and tool-result texts are left out; long tool results are truncated."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = _text_of(message.content)
            if text:
                parts.append("[User]: " + text)
        elif isinstance(message, AssistantMessage):
            parts.extend(_assistant_parts(message))
        elif isinstance(message, ToolResultMessage):
            text = _text_of(message.content)
            if text:
                parts.append("[Tool result]: " + truncate_tool_output(text))
    return "\n\n".join(parts)


def serialize_conversation(messages: Sequence[AgentMessage]) -> str:
    """Coding-agent messages converted for the model (`convert_to_llm`), then serialized as text."""
    return serialize_llm_messages(convert_to_llm(messages))


__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "serialize_llm_messages", "truncate_tool_output"]
