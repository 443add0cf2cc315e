"""Plain-text rendering of a conversation for the summarizer.

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


def _message_parts(message: Message) -> list[str]:
    if isinstance(message, AssistantMessage):
        return _assistant_parts(message)
    if isinstance(message, UserMessage):
        text = _text_of(message.content)
        return ["[User]: " + text] if text else []
    if isinstance(message, ToolResultMessage):
        text = _text_of(message.content)
        return ["[Tool result]: " + truncate_tool_output(text)] if text else []
    return []


def omitted_note(count: int) -> str:
    return f"[... {count} earlier messages omitted: they do not fit the summarizer's context window]"


def serialize_llm_messages(messages: Sequence[Message], max_chars: int | None = None, older_omitted: int = 0) -> str:
    """Provider messages as `[User]: ...`, `[Assistant ...]: ...`, `[Tool result]: ...` blocks joined by a blank
    line. Empty user and tool-result texts are left out; long tool results are truncated.

    With `max_chars`, only the newest messages whose blocks fit are rendered, after a note saying how many older
    ones were left out (`older_omitted` more were never passed in): a transcript larger than the summarizer's
    window could not be summarized at all.
    """
    if max_chars is None:
        parts: list[str] = []
        for message in messages:
            parts.extend(_message_parts(message))
        return "\n\n".join(parts)
    newest_first: list[str] = []
    used = 0
    omitted = older_omitted
    for index in range(len(messages) - 1, -1, -1):
        blocks = _message_parts(messages[index])
        size = sum(len(block) + 2 for block in blocks)
        if used + size > max_chars:
            omitted += index + 1
            break
        newest_first.extend(reversed(blocks))
        used += size
    if omitted:
        newest_first.append(omitted_note(omitted))
    newest_first.reverse()
    return "\n\n".join(newest_first)


def serialize_conversation(messages: Sequence[AgentMessage], max_chars: int | None = None) -> str:
    """Coding-agent messages converted for the model (`convert_to_llm`), then serialized as text (see
    `serialize_llm_messages` for `max_chars`). With a budget only the newest messages are converted."""
    if max_chars is None:
        return serialize_llm_messages(convert_to_llm(messages))
    # Convert from the end in growing chunks until the converted text surely exceeds the budget, so a huge span
    # costs what its newest part costs.
    converted: list[Message] = []
    chars = 0
    end = len(messages)
    chunk = 256
    while end > 0 and chars <= max_chars:
        begin = max(0, end - chunk)
        part = convert_to_llm(messages[begin:end])
        converted[:0] = part
        chars += sum(_min_chars(m) for m in part)
        end = begin
        chunk *= 2
    return serialize_llm_messages(converted, max_chars, older_omitted=end)


def _min_chars(message: Message) -> int:
    """A lower bound of the message's serialized size (text it will certainly contain)."""
    content = message.content
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
    if isinstance(message, ToolResultMessage):
        total = min(total, TOOL_RESULT_MAX_CHARS)
    return total


__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "omitted_note",
    "serialize_conversation",
    "serialize_llm_messages",
    "truncate_tool_output",
]
