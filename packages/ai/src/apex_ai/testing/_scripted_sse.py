"""SSE frames of one scripted reply for each API the scripted model server speaks.

Each encoder returns the whole stream as a list of frames; the server decides how many of them to
send (`cut_after_chunks`) and how fast (`delay_ms`). Ids follow the pi captures: `msg_fake_{seq}`,
`toolu_fake_{seq}_{i}`, `chatcmpl-fake-{seq}`, `call_fake_{seq}_{i}`, `resp_fake_{seq}`, `fc_fake_{seq}_{i}`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from apex_ai.testing._scripted_wire import (
    Api,
    JsonObject,
    RequestInfo,
    ScriptedReply,
    argument_chunks,
    sse,
    word_chunks,
)

_ANTHROPIC_STOP: Final = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}
_CHAT_FINISH: Final = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}

# --------------------------------------------------------------------------- anthropic messages


def _anthropic_usage(reply: ScriptedReply, output: int) -> JsonObject:
    usage = reply.usage
    return {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": output,
    }


def anthropic_frames(reply: ScriptedReply, info: RequestInfo) -> list[bytes]:
    """A Messages API stream: message_start, ping, content blocks, message_delta, message_stop."""
    message: JsonObject = {
        "id": f"msg_fake_{info.seq}",
        "type": "message",
        "role": "assistant",
        "model": info.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        # Like the real API: message_start reports one output token; message_delta the final count.
        "usage": _anthropic_usage(reply, min(1, reply.usage.output)),
    }
    frames = [sse({"type": "message_start", "message": message}, "message_start"), sse({"type": "ping"}, "ping")]
    index = 0

    def block(start: JsonObject, deltas: list[JsonObject]) -> None:
        nonlocal index
        frames.append(
            sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")
        )
        frames.extend(
            sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            for delta in deltas
        )
        frames.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if reply.thinking:
        deltas = [{"type": "thinking_delta", "thinking": chunk} for chunk in word_chunks(reply.thinking)]
        deltas.append({"type": "signature_delta", "signature": f"sig_fake_{info.seq}_{index}"})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if reply.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": c} for c in word_chunks(reply.text)])
    for i, call in enumerate(reply.tool_calls):
        start = {"type": "tool_use", "id": call.id or f"toolu_fake_{info.seq}_{i}", "name": call.name, "input": {}}
        block(start, [{"type": "input_json_delta", "partial_json": c} for c in argument_chunks(call.arguments)])
    if reply.stream_error is not None:
        error = {"type": reply.stream_error.type, "message": reply.stream_error.message}
        frames.append(sse({"type": "error", "error": error}, "error"))
        return frames
    delta = {"stop_reason": _ANTHROPIC_STOP[reply.stop_reason], "stop_sequence": None}
    frames.append(
        sse({"type": "message_delta", "delta": delta, "usage": {"output_tokens": reply.usage.output}}, "message_delta")
    )
    frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


# --------------------------------------------------------------------------- openai chat completions


def chat_frames(reply: ScriptedReply, info: RequestInfo) -> list[bytes]:
    """A Chat Completions stream; a usage chunk only when the request asked for it, then `[DONE]`."""
    base: JsonObject = {
        "id": f"chatcmpl-fake-{info.seq}",
        "object": "chat.completion.chunk",
        "created": info.created,
        "model": info.model,
    }

    def chunk(delta: JsonObject, finish: str | None = None) -> bytes:
        return sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    frames = [chunk({"role": "assistant", "content": ""})]
    if reply.thinking:
        frames.extend(chunk({"reasoning_content": c}) for c in word_chunks(reply.thinking))
    if reply.text:
        frames.extend(chunk({"content": c}) for c in word_chunks(reply.text))
    for i, call in enumerate(reply.tool_calls):
        opening = {
            "index": i,
            "id": call.id or f"call_fake_{info.seq}_{i}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        frames.append(chunk({"tool_calls": [opening]}))
        frames.extend(
            chunk({"tool_calls": [{"index": i, "function": {"arguments": c}}]}) for c in argument_chunks(call.arguments)
        )
    if reply.stream_error is not None:
        # What OpenAI-compatible servers send when generation fails mid-stream; the SDK raises on it.
        error = {"message": reply.stream_error.message, "type": reply.stream_error.type, "code": None}
        frames.append(sse({"error": error}))
        return frames
    frames.append(chunk({}, _CHAT_FINISH[reply.stop_reason]))
    if info.include_usage:
        usage = reply.usage
        prompt = usage.input + usage.cache_read + usage.cache_write
        usage_body: JsonObject = {
            "prompt_tokens": prompt,
            "completion_tokens": usage.output,
            "total_tokens": prompt + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        }
        frames.append(sse({**base, "choices": [], "usage": usage_body}))
    frames.append(sse("[DONE]"))
    return frames


# --------------------------------------------------------------------------- openai responses


class _ResponsesWriter:
    """Numbers the events of one Responses stream and keeps the finished output items."""

    def __init__(self, info: RequestInfo) -> None:
        self.info = info
        self.frames: list[bytes] = []
        self.items: list[JsonObject] = []
        self._sequence = 0

    def emit(self, kind: str, **fields: Any) -> None:  # Any: JSON event fields
        self.frames.append(sse({"type": kind, "sequence_number": self._sequence, **fields}, kind))
        self._sequence += 1

    def response(self, status: str, **fields: Any) -> JsonObject:  # Any: JSON response fields
        return {
            "id": f"resp_fake_{self.info.seq}",
            "object": "response",
            "created_at": self.info.created,
            "status": status,
            "model": self.info.model,
            "output": list(self.items) if status != "in_progress" else [],
            "usage": None,
            "error": None,
            "incomplete_details": None,
            **fields,
        }

    def item(self, added: JsonObject, done: JsonObject, body: Callable[[int], None]) -> None:
        """output_item.added, the item's own events (`body(output_index)`), output_item.done."""
        output_index = len(self.items)
        self.emit("response.output_item.added", output_index=output_index, item=added)
        body(output_index)
        self.emit("response.output_item.done", output_index=output_index, item=done)
        self.items.append(done)


def _responses_usage(reply: ScriptedReply) -> JsonObject:
    usage = reply.usage
    prompt = usage.input + usage.cache_read + usage.cache_write
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + usage.output,
    }


def _reasoning_item(out: _ResponsesWriter, thinking: str, item_id: str) -> None:
    summary = {"type": "summary_text", "text": thinking}

    def body(output_index: int) -> None:
        where = {"item_id": item_id, "output_index": output_index, "summary_index": 0}
        out.emit("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
        for piece in word_chunks(thinking):
            out.emit("response.reasoning_summary_text.delta", **where, delta=piece)
        out.emit("response.reasoning_summary_text.done", **where, text=thinking)
        out.emit("response.reasoning_summary_part.done", **where, part=summary)

    added = {"type": "reasoning", "id": item_id, "summary": []}
    out.item(added, {**added, "summary": [summary]}, body)


def _message_item(out: _ResponsesWriter, text: str, item_id: str) -> None:
    part = {"type": "output_text", "text": text, "annotations": []}

    def body(output_index: int) -> None:
        where = {"item_id": item_id, "output_index": output_index, "content_index": 0}
        out.emit("response.content_part.added", **where, part={**part, "text": ""})
        for piece in word_chunks(text):
            out.emit("response.output_text.delta", **where, delta=piece)
        out.emit("response.output_text.done", **where, text=text)
        out.emit("response.content_part.done", **where, part=part)

    added = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}
    out.item(added, {**added, "status": "completed", "content": [part]}, body)


def _function_call_item(out: _ResponsesWriter, name: str, arguments: JsonObject, item_id: str, call_id: str) -> None:
    pieces = argument_chunks(arguments)
    encoded = "".join(pieces)

    def body(output_index: int) -> None:
        where = {"item_id": item_id, "output_index": output_index}
        for piece in pieces:
            out.emit("response.function_call_arguments.delta", **where, delta=piece)
        out.emit("response.function_call_arguments.done", **where, arguments=encoded)

    added = {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": ""}
    out.item({**added, "status": "in_progress"}, {**added, "arguments": encoded, "status": "completed"}, body)


def responses_frames(reply: ScriptedReply, info: RequestInfo) -> list[bytes]:
    """A Responses API stream: created, in_progress, output items, then completed/incomplete/failed."""
    out = _ResponsesWriter(info)
    out.emit("response.created", response=out.response("in_progress"))
    out.emit("response.in_progress", response=out.response("in_progress"))
    seq = info.seq
    if reply.thinking:
        _reasoning_item(out, reply.thinking, f"rs_fake_{seq}_{len(out.items)}")
    if reply.text:
        _message_item(out, reply.text, f"msg_fake_{seq}")  # the capture's id: no item index, unlike the others
    for i, call in enumerate(reply.tool_calls):
        _function_call_item(out, call.name, call.arguments, f"fc_fake_{seq}_{i}", call.id or f"call_fake_{seq}_{i}")
    usage = _responses_usage(reply)
    if reply.stream_error is not None:
        error = {"code": reply.stream_error.type, "message": reply.stream_error.message}
        out.emit("response.failed", response=out.response("failed", error=error, usage=usage))
    elif reply.stop_reason == "length":
        details = {"reason": "max_output_tokens"}
        out.emit("response.incomplete", response=out.response("incomplete", incomplete_details=details, usage=usage))
    else:
        out.emit("response.completed", response=out.response("completed", usage=usage))
    return out.frames


ENCODERS: Final[dict[Api, Callable[[ScriptedReply, RequestInfo], list[bytes]]]] = {
    "anthropic": anthropic_frames,
    "chat": chat_frames,
    "responses": responses_frames,
}
