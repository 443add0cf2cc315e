"""Response side of `openai-responses`: stream events -> our events.

`ResponsesDecoder` reads each server event as the raw JSON dict it arrived as (the SDK's typed
models leave fields unset when a server omits them, and keep unknown ones as extras), updates the
assistant message under construction and pushes our block events. Items are tracked by their
`output_index`, so interleaved items each land in their own block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
from apex_ai.providers.openai_responses_request import JsonObject, compact_json, encode_text_signature
from apex_ai.types import AssistantMessage, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage

PARTIAL_JSON_KEY = "partialJson"
"""Scratch field of a streaming tool call (the raw argument text so far); removed at `toolcall_end`."""

TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})


class ResponsesStreamError(Exception):
    """The server reported a failure inside the stream (`error` or `response.failed`)."""


# --------------------------------------------------------------------------- usage and status


def service_tier_multiplier(model_id: str, tier: str | None) -> float:
    """Price factor of a service tier: flex is half price, priority double (gpt-5.5: 2.5x)."""
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model_id.startswith("gpt-5.5") else 2.0
    return 1.0


def _int(value: Any) -> int:  # Any: a JSON number, null or absent
    return value if isinstance(value, int) else 0


def usage_from_response(model: Model, raw: JsonObject, service_tier: str | None) -> Usage:
    """Our usage from a Responses `usage` object, priced (input excludes cached tokens)."""
    input_details = raw.get("input_tokens_details") or {}
    output_details = raw.get("output_tokens_details") or {}
    cache_read = _int(input_details.get("cached_tokens"))
    cache_write = _int(input_details.get("cache_write_tokens"))
    usage = Usage(
        input=max(0, _int(raw.get("input_tokens")) - cache_read - cache_write),
        output=_int(raw.get("output_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
    )
    reasoning = _int(output_details.get("reasoning_tokens"))
    if reasoning:  # left out when zero, as the original writes it
        usage.reasoning = reasoning
    usage.total_tokens = _int(raw.get("total_tokens")) or (usage.input + usage.output + cache_read + cache_write)
    cost = calculate_cost(model, usage)
    factor = service_tier_multiplier(model.id, service_tier)
    if factor != 1.0:
        cost.input *= factor
        cost.output *= factor
        cost.cache_read *= factor
        cost.cache_write *= factor
        cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return usage


def failure_text(response: JsonObject) -> str:
    """The error text of a failed response: `"{code}: {message}"` or `"incomplete: {reason}"`."""
    error = response.get("error")
    if isinstance(error, dict):
        return f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
    details = response.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return f"incomplete: {details['reason']}"
    return "Unknown error (no error details in response)"


def map_status(response: JsonObject, has_tool_calls: bool) -> tuple[StopReason, str, str | None]:
    """`(stop_reason, raw_stop_reason, error_message)` of a terminal response."""
    status = response.get("status") or "completed"
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    raw = f"{status}.{reason}" if reason else str(status)
    if status == "incomplete":
        if reason == "max_output_tokens":
            return "length", raw, None
        return "error", raw, f"Response incomplete: {reason or 'unknown'}"
    if status == "failed":
        return "error", raw, failure_text(response)
    if status == "cancelled":
        return "error", raw, "Response cancelled"
    # completed, and the non-final in_progress/queued that some compatible servers end with.
    return ("toolUse" if has_tool_calls else "stop"), raw, None


# --------------------------------------------------------------------------- decoder


@dataclass(eq=False)
class _Item:
    kind: Literal["reasoning", "message", "function_call"]
    block_index: int
    closed: bool = False


class ResponsesDecoder:
    """Feeds Responses stream events into `output`, pushing block events to `out`."""

    def __init__(
        self,
        model: Model,
        output: AssistantMessage,
        out: AssistantMessageEventStream,
        requested_service_tier: str | None = None,
    ) -> None:
        self.model = model
        self.requested_service_tier = requested_service_tier
        """The tier the body asked for; prices the usage when the response does not name its tier."""
        self.output = output
        self.out = out
        self.terminal: JsonObject | None = None
        """The `response` object of `response.completed`/`.incomplete`, once seen."""
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        self._last: _Item | None = None

    # ----------------------------------------------------------------- dispatch

    def handle(self, event: JsonObject) -> None:
        """Apply one server event; raises `ResponsesStreamError` for `error` and `response.failed`."""
        kind = event.get("type")
        response = event.get("response")
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            self.output.response_id = response["id"]
        if kind == "response.output_item.added":
            self._item_added(event)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._thinking_delta(event, str(event.get("delta") or ""))
        elif kind == "response.reasoning_summary_part.done":
            self._thinking_delta(event, "\n\n")
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            self._text_delta(event, str(event.get("delta") or ""))
        elif kind == "response.function_call_arguments.delta":
            self._arguments_delta(event, str(event.get("delta") or ""))
        elif kind == "response.function_call_arguments.done":
            self._arguments_done(event)
        elif kind == "response.output_item.done":
            self._item_done(event)
        elif kind in TERMINAL_EVENTS:
            self._terminal(event)
        elif kind == "response.failed":
            failed = response if isinstance(response, dict) else {}
            self._apply_usage(failed)
            self.output.raw_stop_reason = "failed"
            raise ResponsesStreamError(failure_text(failed))
        elif kind == "error":
            raise ResponsesStreamError(f"Error Code {event.get('code')}: {event.get('message')}")

    def _find(self, event: JsonObject, kind: str) -> _Item | None:
        item: _Item | None = None
        index = event.get("output_index")
        if isinstance(index, int):
            item = self._items.get(index)
        if item is None and isinstance(event.get("item_id"), str):
            item = self._by_id.get(event["item_id"])
        if item is None:
            item = self._last
        return item if item is not None and item.kind == kind and not item.closed else None

    # ----------------------------------------------------------------- items

    def _item_added(self, event: JsonObject) -> None:
        raw = event.get("item")
        if not isinstance(raw, dict):
            return
        kind = raw.get("type")
        content = self.output.content
        if kind == "reasoning":
            content.append(ThinkingContent(thinking=""))
            item = _Item("reasoning", len(content) - 1)
            self.out.push(ThinkingStartEvent(content_index=item.block_index, partial=self.output))
        elif kind == "message":
            content.append(TextContent(text=""))
            item = _Item("message", len(content) - 1)
            self.out.push(TextStartEvent(content_index=item.block_index, partial=self.output))
        elif kind == "function_call":
            buffer = str(raw.get("arguments") or "")
            call = ToolCall(
                id=f"{raw.get('call_id')}|{raw.get('id')}",
                name=str(raw.get("name") or ""),
                arguments=parse_partial_json(buffer) if buffer else {},
                namespace=raw.get("namespace") if isinstance(raw.get("namespace"), str) else None,
            )
            _set_partial_json(call, buffer)
            content.append(call)
            item = _Item("function_call", len(content) - 1)
            self.out.push(ToolCallStartEvent(content_index=item.block_index, partial=self.output))
        else:
            return  # hosted tool calls (web search, ...) have no block of ours
        index = event.get("output_index")
        if isinstance(index, int):
            self._items[index] = item
        if isinstance(raw.get("id"), str):
            self._by_id[raw["id"]] = item
        self._last = item

    def _thinking_delta(self, event: JsonObject, delta: str) -> None:
        item = self._find(event, "reasoning")
        if item is None or not delta:
            return
        block = self.output.content[item.block_index]
        assert isinstance(block, ThinkingContent)
        block.thinking += delta
        self.out.push(ThinkingDeltaEvent(content_index=item.block_index, delta=delta, partial=self.output))

    def _text_delta(self, event: JsonObject, delta: str) -> None:
        item = self._find(event, "message")
        if item is None or not delta:
            return
        block = self.output.content[item.block_index]
        assert isinstance(block, TextContent)
        block.text += delta
        self.out.push(TextDeltaEvent(content_index=item.block_index, delta=delta, partial=self.output))

    def _arguments_delta(self, event: JsonObject, delta: str) -> None:
        item = self._find(event, "function_call")
        if item is None or not delta:
            return
        call = self.output.content[item.block_index]
        assert isinstance(call, ToolCall)
        buffer = _partial_json(call) + delta
        _set_partial_json(call, buffer)
        call.arguments = parse_partial_json(buffer)
        self.out.push(ToolCallDeltaEvent(content_index=item.block_index, delta=delta, partial=self.output))

    def _arguments_done(self, event: JsonObject) -> None:
        item = self._find(event, "function_call")
        final = event.get("arguments")
        if item is None or not isinstance(final, str):
            return
        call = self.output.content[item.block_index]
        assert isinstance(call, ToolCall)
        previous = _partial_json(call)
        _set_partial_json(call, final)
        call.arguments = parse_partial_json(final)
        # Deltas must add up to the final text: send whatever the deltas did not carry.
        if final.startswith(previous) and len(final) > len(previous):
            rest = final[len(previous) :]
            self.out.push(ToolCallDeltaEvent(content_index=item.block_index, delta=rest, partial=self.output))

    def _item_done(self, event: JsonObject) -> None:
        raw = event.get("item")
        if not isinstance(raw, dict):
            return
        item = self._find(event, str(raw.get("type")))
        if item is None:
            return
        block = self.output.content[item.block_index]
        if isinstance(block, ThinkingContent):
            summary = _joined(raw.get("summary"), "text", "\n\n")
            reasoning = _joined(raw.get("content"), "text", "\n\n")
            block.thinking = summary or reasoning or block.thinking
            block.thinking_signature = compact_json(raw)
        elif isinstance(block, TextContent):
            text = "".join(
                str(part.get("text") if part.get("type") == "output_text" else part.get("refusal") or "")
                for part in raw.get("content") or []
                if isinstance(part, dict)
            )
            block.text = text or block.text
            if isinstance(raw.get("id"), str):
                phase = raw.get("phase")
                block.text_signature = encode_text_signature(raw["id"], phase if isinstance(phase, str) else None)
        elif isinstance(block, ToolCall):
            final = raw.get("arguments")
            if isinstance(final, str) and final:
                _set_partial_json(block, final)
            if raw.get("call_id") is not None and raw.get("id") is not None:
                block.id = f"{raw['call_id']}|{raw['id']}"
            if isinstance(raw.get("name"), str) and raw["name"]:
                block.name = raw["name"]
        self._close(item)

    def _close(self, item: _Item) -> None:
        item.closed = True
        block = self.output.content[item.block_index]
        if isinstance(block, ThinkingContent):
            self.out.push(ThinkingEndEvent(content_index=item.block_index, content=block.thinking, partial=self.output))
        elif isinstance(block, TextContent):
            self.out.push(TextEndEvent(content_index=item.block_index, content=block.text, partial=self.output))
        else:
            block.arguments = parse_partial_json(_partial_json(block) or "{}")
            drop_scratch(block)
            self.out.push(
                ToolCallEndEvent(content_index=item.block_index, tool_call=block.model_copy(), partial=self.output)
            )

    def close_open_items(self) -> None:
        """End every block still open, so each started block gets its `*_end` before `done`."""
        for item in sorted(set(self._items.values()) | set(self._by_id.values()), key=lambda i: i.block_index):
            if not item.closed:
                self._close(item)

    # ----------------------------------------------------------------- terminal events

    def _apply_usage(self, response: JsonObject) -> None:
        usage = response.get("usage")
        if isinstance(usage, dict):
            tier = response.get("service_tier")
            if not isinstance(tier, str):
                tier = self.requested_service_tier
            self.output.usage = usage_from_response(self.model, usage, tier)
        served = response.get("model")
        if isinstance(served, str) and served and served != self.model.id:
            self.output.response_model = served

    def _terminal(self, event: JsonObject) -> None:
        response = event.get("response")
        self.terminal = response if isinstance(response, dict) else {}
        self._apply_usage(self.terminal)


def _joined(parts: Any, key: str, separator: str) -> str:  # Any: a JSON list of part objects, or absent
    if not isinstance(parts, list):
        return ""
    return separator.join(str(part.get(key) or "") for part in parts if isinstance(part, dict))


def _partial_json(call: ToolCall) -> str:
    extra = call.__pydantic_extra__ or {}
    value = extra.get(PARTIAL_JSON_KEY)
    return value if isinstance(value, str) else ""


def _set_partial_json(call: ToolCall, buffer: str) -> None:
    # Kept on the block itself (an extra field) so live `partial` snapshots show it, as the original does.
    if call.__pydantic_extra__ is None:
        call.__pydantic_extra__ = {}
    call.__pydantic_extra__[PARTIAL_JSON_KEY] = buffer


def drop_scratch(block: object) -> None:
    """Remove streaming scratch fields from a content block (before it is final or persisted)."""
    if isinstance(block, ToolCall) and block.__pydantic_extra__:
        block.__pydantic_extra__.pop(PARTIAL_JSON_KEY, None)


__all__ = [
    "ResponsesDecoder",
    "ResponsesStreamError",
    "drop_scratch",
    "failure_text",
    "map_status",
    "service_tier_multiplier",
    "usage_from_response",
]
