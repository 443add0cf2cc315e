"""Turn streamed Chat Completions chunks into our event protocol.

`CompletionsDecoder` owns the partial assistant message. It reads chunks by duck typing (the
adapter feeds parsed JSON; the SDK's `ChatCompletionChunk` looks alike), so it needs no SDK import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from apex_ai.providers.openai_compat import CompletionsCompat
from apex_ai.providers.openai_completions_request import REASONING_FIELDS
from apex_ai.types import AssistantMessage, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage

# Scratch fields kept on a streaming tool call (the original product shows them in partial messages
# too); they are removed before `toolcall_end`.
_PARTIAL_ARGS = "partialArgs"
_STREAM_INDEX = "streamIndex"

_STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _field(obj: Any, name: str) -> Any:
    """`obj.name`, `obj[name]`, or an unknown field kept in a pydantic model's extras; None if absent."""
    if type(obj) is dict:  # the adapter feeds parsed JSON: answer without the slower checks below
        return obj.get(name)
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def parse_usage(raw: Any, model: Model) -> Usage:
    """Usage of a Chat Completions reply: `input` excludes cache reads and writes."""
    prompt_details = _field(raw, "prompt_tokens_details")
    cache_read_raw = _field(prompt_details, "cached_tokens")
    if cache_read_raw is None:
        cache_read_raw = _field(raw, "prompt_cache_hit_tokens")  # DeepSeek reports cache hits top-level
    cache_read = _count(cache_read_raw)
    cache_write = _count(_field(prompt_details, "cache_write_tokens"))
    output = _count(_field(raw, "completion_tokens"))
    reasoning = _count(_field(_field(raw, "completion_tokens_details"), "reasoning_tokens"))
    usage = Usage(
        input=max(0, _count(_field(raw, "prompt_tokens")) - cache_read - cache_write),
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=reasoning or None,
    )
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    calculate_cost(model, usage)
    return usage


def map_finish_reason(raw: str) -> tuple[StopReason, str | None]:
    """Our stop reason for a `finish_reason`, and the error text when it is not a normal end."""
    mapped = _STOP_REASONS.get(raw)
    if mapped is not None:
        return mapped, None
    return "error", f"Provider finish_reason: {raw}"


class CompletionsDecoder:
    """Builds `output` from chunks and pushes block events to `out`. Call `feed` per chunk, then `close_blocks`."""

    def __init__(
        self, model: Model, output: AssistantMessage, out: AssistantMessageEventStream, compat: CompletionsCompat
    ) -> None:
        self.model = model
        self.output = output
        self.out = out
        self.compat = compat
        self.finish_reason: str | None = None
        self._text_index: int | None = None
        self._thinking_index: int | None = None
        self._tool_index: dict[object, int] = {}
        """Stream key of a tool call (its `index`, else its id) -> content index."""
        self._open: list[int] = []
        """Content indices of started blocks without their `*_end` yet, in start order."""
        self._last_tool_key: object = None

    # ------------------------------------------------------------------ chunks

    def feed(self, chunk: Any) -> None:
        """Apply one chunk: ids, usage, finish reason, then text, thinking and tool call deltas."""
        chunk_id = _field(chunk, "id")
        if isinstance(chunk_id, str) and chunk_id and self.output.response_id is None:
            self.output.response_id = chunk_id
        chunk_model = _field(chunk, "model")
        if isinstance(chunk_model, str) and chunk_model and chunk_model != self.model.id:
            self.output.response_model = chunk_model

        usage = _field(chunk, "usage")
        choices = _field(chunk, "choices") or []
        choice = choices[0] if choices else None
        if usage is None and choice is not None:
            usage = _field(choice, "usage")  # Moonshot puts usage on the choice
        if usage is not None:
            self.output.usage = parse_usage(usage, self.model)
        if choice is None:
            return

        finish = _field(choice, "finish_reason")
        if isinstance(finish, str) and finish:
            self.finish_reason = finish

        delta = _field(choice, "delta")
        if delta is None:
            return
        content = _field(delta, "content")
        if isinstance(content, str) and content:
            self._text(content)
        for name in REASONING_FIELDS:
            # First non-empty field only: some servers send the same text under two names.
            value = _field(delta, name)
            if isinstance(value, str) and value:
                self._thinking(value, name)
                break
        for tool_delta in _field(delta, "tool_calls") or []:
            self._tool_call(tool_delta)

    def _text(self, text: str) -> None:
        if self._thinking_index is not None:
            self._end(self._thinking_index)
        if self._text_index is None:
            self._text_index = self._start(TextContent(text=""))
            self.out.push(TextStartEvent(content_index=self._text_index, partial=self.output))
        block = self.output.content[self._text_index]
        assert isinstance(block, TextContent)
        block.text += text
        self.out.push(TextDeltaEvent(content_index=self._text_index, delta=text, partial=self.output))

    def _thinking(self, text: str, field: str) -> None:
        if self._text_index is not None:
            self._end(self._text_index)
        if self._thinking_index is None:
            self._thinking_index = self._start(ThinkingContent(thinking="", thinking_signature=field))
            self.out.push(ThinkingStartEvent(content_index=self._thinking_index, partial=self.output))
        block = self.output.content[self._thinking_index]
        assert isinstance(block, ThinkingContent)
        block.thinking += text
        self.out.push(ThinkingDeltaEvent(content_index=self._thinking_index, delta=text, partial=self.output))

    def _tool_call(self, tool_delta: Any) -> None:
        # Text or thinking before a tool call is finished; tool calls stay open until the end, because
        # several calls may stream interleaved, told apart by their `index`.
        for index in (self._text_index, self._thinking_index):
            if index is not None:
                self._end(index)
        call_id = _field(tool_delta, "id")
        call_id = call_id if isinstance(call_id, str) and call_id else None
        stream_index = _field(tool_delta, "index")
        key: object = stream_index if isinstance(stream_index, int) else (call_id or self._last_tool_key)
        function = _field(tool_delta, "function")
        name = _field(function, "name")
        fragment = _field(function, "arguments")
        fragment = fragment if isinstance(fragment, str) else ""

        content_index = self._tool_index.get(key)
        if content_index is not None and call_id is not None:
            existing = self.output.content[content_index]
            if isinstance(existing, ToolCall) and existing.id and existing.id != call_id:
                # Some servers reuse index 0 for every call: a new id means a new call.
                self._end(content_index)
                content_index = None
        if content_index is None:
            block = ToolCall(id=call_id or "", name=name if isinstance(name, str) else "", arguments={})
            extra = self._extra(block)
            extra[_PARTIAL_ARGS] = ""
            extra[_STREAM_INDEX] = stream_index if isinstance(stream_index, int) else len(self._tool_index)
            content_index = self._start(block)
            self._tool_index[key] = content_index
            self.out.push(ToolCallStartEvent(content_index=content_index, partial=self.output))
        self._last_tool_key = key

        call = self.output.content[content_index]
        assert isinstance(call, ToolCall)
        if call_id is not None:
            call.id = call_id
        if isinstance(name, str) and name:
            call.name = name
        if fragment:
            extra = self._extra(call)
            extra[_PARTIAL_ARGS] = str(extra.get(_PARTIAL_ARGS, "")) + fragment
            call.arguments = parse_partial_json(extra[_PARTIAL_ARGS])
        self.out.push(ToolCallDeltaEvent(content_index=content_index, delta=fragment, partial=self.output))

    # ------------------------------------------------------------------ blocks

    @staticmethod
    def _extra(block: ToolCall) -> dict[str, Any]:
        if block.__pydantic_extra__ is None:
            block.__pydantic_extra__ = {}
        return block.__pydantic_extra__

    def _start(self, block: TextContent | ThinkingContent | ToolCall) -> int:
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self._open.append(index)
        return index

    def _end(self, index: int) -> None:
        if index not in self._open:
            return
        self._open.remove(index)
        if index == self._text_index:
            self._text_index = None
        if index == self._thinking_index:
            self._thinking_index = None
        block = self.output.content[index]
        if isinstance(block, TextContent):
            self.out.push(TextEndEvent(content_index=index, content=block.text, partial=self.output))
        elif isinstance(block, ThinkingContent):
            self.out.push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.output))
        else:
            self._finalize_tool_call(block)
            self.out.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.output))

    def _finalize_tool_call(self, block: ToolCall) -> None:
        extra = self._extra(block)
        buffer = extra.pop(_PARTIAL_ARGS, None)
        extra.pop(_STREAM_INDEX, None)
        if isinstance(buffer, str):
            block.arguments = parse_partial_json(buffer)

    def close_blocks(self) -> None:
        """Push `*_end` for every block still open, in content order."""
        for index in sorted(self._open):
            self._end(index)

    def drop_scratch(self) -> None:
        """Finish tool call arguments without events (error paths keep partial content, not scratch)."""
        for block in self.output.content:
            if isinstance(block, ToolCall):
                self._finalize_tool_call(block)

    # ------------------------------------------------------------------ result

    def stop_reason(self) -> tuple[StopReason, str | None]:
        """The final stop reason and, for an error, its message."""
        if self.finish_reason is None:
            if self.compat.supports_finish_reason:
                return "error", "Stream ended without finish_reason"
            has_calls = any(isinstance(b, ToolCall) for b in self.output.content)
            return ("toolUse" if has_calls else "stop"), None
        return map_finish_reason(self.finish_reason)


__all__ = ["CompletionsDecoder", "map_finish_reason", "parse_usage"]
