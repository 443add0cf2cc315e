"""A scripted OpenAI Responses server behind `httpx2.MockTransport`.

Each request gets the next scripted `Reply`: an SSE stream of event dicts (written the way the
Responses API writes them: `event: <type>` + `data: <json>`), or a plain error answer. The
transport records every request body so tests can compare what the adapter sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx2


def sse_frame(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def sequenced(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with `sequence_number`s, as the server numbers them."""
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


@dataclass
class Reply:
    """One scripted answer. `events` are streamed; with `status` >= 400, `body` is sent instead."""

    events: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    pause_after: int | None = None
    """Stop after this many events and wait until `resume` is set (to abort mid-stream)."""
    resume: asyncio.Event | None = None
    paused: asyncio.Event = field(default_factory=asyncio.Event)


class AsyncBody(httpx2.AsyncByteStream):
    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for number, event in enumerate(sequenced(self.reply.events)):
            if self.reply.pause_after is not None and number == self.reply.pause_after:
                self.reply.paused.set()
                assert self.reply.resume is not None
                await self.reply.resume.wait()
            yield sse_frame(event)


class ResponsesServer:
    """Serves `replies` in order and records each request's JSON body in `bodies`."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.requests: list[httpx2.Request] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0)
        if reply.status >= 400:
            return httpx2.Response(reply.status, text=reply.body, headers=reply.headers)
        return httpx2.Response(
            200, stream=AsyncBody(reply), headers={"content-type": "text/event-stream", **reply.headers}
        )

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))


# --------------------------------------------------------------------------- event builders


def created(response_id: str, model: str = "gpt-test") -> dict[str, Any]:
    return {
        "type": "response.created",
        "response": {"id": response_id, "object": "response", "status": "in_progress", "model": model, "output": []},
    }


def message_events(
    output_index: int, item_id: str, pieces: list[str], phase: str | None = None
) -> list[dict[str, Any]]:
    """A complete assistant message item streamed as `pieces`."""
    text = "".join(pieces)
    item: dict[str, Any] = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    if phase is not None:
        item["phase"] = phase
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    part = {"type": "output_text", "text": "", "annotations": []}
    where = {"output_index": output_index, "item_id": item_id, "content_index": 0}
    return [
        {"type": "response.output_item.added", "output_index": output_index, "item": item},
        {"type": "response.content_part.added", **where, "part": part},
        *({"type": "response.output_text.delta", **where, "delta": piece} for piece in pieces),
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
        {"type": "response.output_item.done", "output_index": output_index, "item": done_item},
    ]


def function_call_events(
    output_index: int, item_id: str, call_id: str, name: str, pieces: list[str]
) -> list[dict[str, Any]]:
    """A function call item whose arguments arrive as `pieces`."""
    arguments = "".join(pieces)
    item = {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": "",
        "status": "in_progress",
    }
    where = {"output_index": output_index, "item_id": item_id}
    return [
        {"type": "response.output_item.added", "output_index": output_index, "item": item},
        *({"type": "response.function_call_arguments.delta", **where, "delta": piece} for piece in pieces),
        {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        {
            "type": "response.output_item.done",
            "output_index": output_index,
            "item": {**item, "arguments": arguments, "status": "completed"},
        },
    ]


def reasoning_events(
    output_index: int, item_id: str, summaries: list[list[str]], encrypted: str
) -> list[dict[str, Any]]:
    """A reasoning item with summary parts (each streamed as pieces) and encrypted content."""
    item = {"type": "reasoning", "id": item_id, "summary": []}
    where = {"output_index": output_index, "item_id": item_id}
    events: list[dict[str, Any]] = [{"type": "response.output_item.added", "output_index": output_index, "item": item}]
    for number, pieces in enumerate(summaries):
        text = "".join(pieces)
        events.append(
            {
                "type": "response.reasoning_summary_part.added",
                **where,
                "summary_index": number,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        events.extend(
            {"type": "response.reasoning_summary_text.delta", **where, "summary_index": number, "delta": piece}
            for piece in pieces
        )
        events.append({"type": "response.reasoning_summary_text.done", **where, "summary_index": number, "text": text})
        events.append(
            {
                "type": "response.reasoning_summary_part.done",
                **where,
                "summary_index": number,
                "part": {"type": "summary_text", "text": text},
            }
        )
    done_item = {
        **item,
        "summary": [{"type": "summary_text", "text": "".join(pieces)} for pieces in summaries],
        "encrypted_content": encrypted,
    }
    events.append({"type": "response.output_item.done", "output_index": output_index, "item": done_item})
    return events


def usage(
    input_tokens: int, output_tokens: int, cached: int = 0, reasoning: int = 0, cache_write: int | None = None
) -> dict[str, Any]:
    details: dict[str, Any] = {"cached_tokens": cached}
    if cache_write is not None:
        details["cache_write_tokens"] = cache_write
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": details,
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def finished(
    response_id: str,
    status: str = "completed",
    usage_: dict[str, Any] | None = None,
    *,
    reason: str | None = None,
    service_tier: str | None = None,
    model: str = "gpt-test",
) -> dict[str, Any]:
    """The terminal event: `response.completed`, `.incomplete` or `.failed`, by `status`."""
    response: dict[str, Any] = {"id": response_id, "object": "response", "status": status, "model": model}
    if usage_ is not None:
        response["usage"] = usage_
    if reason is not None:
        response["incomplete_details"] = {"reason": reason}
    if service_tier is not None:
        response["service_tier"] = service_tier
    return {"type": f"response.{status}", "response": response}
