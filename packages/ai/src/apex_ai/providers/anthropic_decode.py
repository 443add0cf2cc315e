"""Decoding of the Anthropic Messages event stream into our events.

The SDK's event types are used for static typing only: this module imports no SDK at runtime.
The SDK builds its events without validation, so fields a proxy sends as null really are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apex_ai.cost import calculate_cost
from apex_ai.event_stream import AssistantMessageEventStream
from apex_ai.events import (
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from apex_ai.partial_json import parse_partial_json
from apex_ai.providers.anthropic_request import from_claude_code_name
from apex_ai.types import AssistantMessage, Model, StopReason, TextContent, ThinkingContent, Tool, ToolCall, Usage

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

REDACTED_THINKING_TEXT = "[Reasoning redacted]"
REFUSAL_FALLBACK = "The model refused to complete the request"

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


class StreamDecodeError(Exception):
    """The stream ended or stopped in a way that makes the reply an error (message = errorMessage)."""


def map_stop_reason(raw: str, explanation: str | None = None) -> tuple[StopReason, str | None]:
    """Our stop reason for Anthropic's, with the error message when it is an error."""
    mapped = _STOP_REASONS.get(raw)
    if mapped is not None:
        return mapped, None
    if raw == "refusal":
        return "error", explanation or REFUSAL_FALLBACK
    if raw == "sensitive":
        return "error", "Provider stopped with: sensitive"
    return "error", f"Unhandled stop reason: {raw}"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nested_int(obj: object, *path: str) -> int | None:
    # The SDK keeps fields it does not know in `model_extra`, which getattr also reaches.
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return _int(obj)


def apply_usage(model: Model, usage: Usage, raw: object) -> None:
    """Overwrite the counts `raw` (an SDK usage object) carries; null or missing fields keep their value."""
    if raw is None:
        return
    input_tokens = _nested_int(raw, "input_tokens")
    output_tokens = _nested_int(raw, "output_tokens")
    cache_read = _nested_int(raw, "cache_read_input_tokens")
    cache_write = _nested_int(raw, "cache_creation_input_tokens")
    cache_write_1h = _nested_int(raw, "cache_creation", "ephemeral_1h_input_tokens")
    thinking = _nested_int(raw, "output_tokens_details", "thinking_tokens")
    if input_tokens is not None:
        usage.input = input_tokens
    if output_tokens is not None:
        usage.output = output_tokens
    if cache_read is not None:
        usage.cache_read = cache_read
    if cache_write is not None:
        usage.cache_write = cache_write
    if cache_write_1h is not None:
        usage.cache_write_1h = cache_write_1h
    if thinking is not None:
        usage.reasoning = thinking
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    calculate_cost(model, usage)


@dataclass
class _OpenBlock:
    """Where an SSE content block lives in our message, plus scratch state kept out of the message."""

    content_index: int
    json_buffer: str = ""


@dataclass
class AnthropicDecoder:
    """Feeds SDK stream events into `output` and pushes our block events to `out`."""

    model: Model
    output: AssistantMessage
    out: AssistantMessageEventStream
    tools: list[Tool] | None = None
    oauth: bool = False
    raw_stop_reason: str | None = None
    stop_error: str | None = None
    saw_message_stop: bool = False
    _open: dict[int, _OpenBlock] = field(default_factory=dict)

    def handle(self, event: RawMessageStreamEvent) -> None:
        """Apply one event; event types a newer API adds fall through every case and are ignored."""
        match event.type:
            case "message_start":
                message = event.message
                if message.id:
                    self.output.response_id = message.id
                if message.model and message.model != self.model.id:
                    self.output.response_model = message.model
                apply_usage(self.model, self.output.usage, message.usage)
            case "content_block_start":
                self._start_block(event.index, event.content_block)
            case "content_block_delta":
                self._delta(event.index, event.delta)
            case "content_block_stop":
                self._stop_block(event.index)
            case "message_delta":
                stop_reason = event.delta.stop_reason
                if stop_reason:
                    self.raw_stop_reason = stop_reason
                    details = event.delta.stop_details
                    explanation = getattr(details, "explanation", None) if details is not None else None
                    mapped, self.stop_error = map_stop_reason(stop_reason, explanation)
                    self.output.stop_reason = mapped
                    self.output.raw_stop_reason = stop_reason
                apply_usage(self.model, self.output.usage, event.usage)
            case "message_stop":
                self.saw_message_stop = True

    # Any: the SDK's block/delta unions grow with server tools we do not handle; we read `type` first.
    def _start_block(self, index: int, block: Any) -> None:
        content = self.output.content
        kind = getattr(block, "type", None)
        if kind == "text":
            content.append(TextContent(text=""))
            self._open[index] = _OpenBlock(len(content) - 1)
            self.out.push(TextStartEvent(content_index=len(content) - 1, partial=self.output))
        elif kind == "thinking":
            content.append(ThinkingContent(thinking="", thinking_signature=""))
            self._open[index] = _OpenBlock(len(content) - 1)
            self.out.push(ThinkingStartEvent(content_index=len(content) - 1, partial=self.output))
        elif kind == "redacted_thinking":
            data = getattr(block, "data", "") or ""
            content.append(ThinkingContent(thinking=REDACTED_THINKING_TEXT, thinking_signature=data, redacted=True))
            self._open[index] = _OpenBlock(len(content) - 1)
            self.out.push(ThinkingStartEvent(content_index=len(content) - 1, partial=self.output))
        elif kind == "tool_use":
            name = str(getattr(block, "name", ""))
            if self.oauth:
                name = from_claude_code_name(name, self.tools)
            given = getattr(block, "input", None)
            content.append(
                ToolCall(id=str(getattr(block, "id", "")), name=name, arguments=dict(given) if given else {})
            )
            self._open[index] = _OpenBlock(len(content) - 1)
            self.out.push(ToolCallStartEvent(content_index=len(content) - 1, partial=self.output))

    def _delta(self, index: int, delta: Any) -> None:
        open_block = self._open.get(index)
        if open_block is None:
            return
        position = open_block.content_index
        block = self.output.content[position]
        kind = getattr(delta, "type", None)
        if kind == "text_delta" and isinstance(block, TextContent):
            text = str(delta.text)
            block.text += text
            self.out.push(TextDeltaEvent(content_index=position, delta=text, partial=self.output))
        elif kind == "thinking_delta" and isinstance(block, ThinkingContent):
            text = str(delta.thinking)
            block.thinking += text
            self.out.push(ThinkingDeltaEvent(content_index=position, delta=text, partial=self.output))
        elif kind == "signature_delta" and isinstance(block, ThinkingContent):
            block.thinking_signature = (block.thinking_signature or "") + str(delta.signature)
        elif kind == "input_json_delta" and isinstance(block, ToolCall):
            fragment = str(delta.partial_json)
            open_block.json_buffer += fragment
            block.arguments = parse_partial_json(open_block.json_buffer)
            self.out.push(ToolCallDeltaEvent(content_index=position, delta=fragment, partial=self.output))

    def _stop_block(self, index: int) -> None:
        open_block = self._open.pop(index, None)
        if open_block is None:
            return
        position = open_block.content_index
        block = self.output.content[position]
        if isinstance(block, TextContent):
            self.out.push(TextEndEvent(content_index=position, content=block.text, partial=self.output))
        elif isinstance(block, ThinkingContent):
            self.out.push(ThinkingEndEvent(content_index=position, content=block.thinking, partial=self.output))
        else:
            if open_block.json_buffer:
                block.arguments = parse_partial_json(open_block.json_buffer)
            self.out.push(
                ToolCallEndEvent(content_index=position, tool_call=block.model_copy(deep=True), partial=self.output)
            )

    def finish(self) -> None:
        """Check the stream ended properly; raises `StreamDecodeError` with the reply's error text if not."""
        if self.raw_stop_reason is None:
            raise StreamDecodeError("Anthropic stream ended without a stop reason")
        if not self.saw_message_stop:
            raise StreamDecodeError("Anthropic stream ended before message_stop")
        if self.stop_error is not None:
            raise StreamDecodeError(self.stop_error)


__all__ = [
    "REDACTED_THINKING_TEXT",
    "AnthropicDecoder",
    "StreamDecodeError",
    "apply_usage",
    "map_stop_reason",
]
