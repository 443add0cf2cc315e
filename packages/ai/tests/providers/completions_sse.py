"""Scripted Chat Completions server for tests: SSE bytes built from chunk dicts, served by `httpx2.MockTransport`.

The real `openai` SDK talks to it through `StreamOptions.http_client`, so requests and replies cross
the same HTTP and SSE code as in production.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    chunk_id: str = "chatcmpl-1",
    model: str = "test-model",
    no_choice: bool = False,
    choice_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One `chat.completion.chunk` object."""
    body: dict[str, Any] = {"id": chunk_id, "object": "chat.completion.chunk", "created": 1, "model": model}
    if no_choice:
        body["choices"] = []
    else:
        choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
        choice.update(choice_extra or {})
        body["choices"] = [choice]
    if usage is not None:
        body["usage"] = usage
    return body


def tool_delta(index: int, *, call_id: str | None = None, name: str | None = None, args: str = "") -> dict[str, Any]:
    """A delta carrying one piece of tool call `index`."""
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return {"tool_calls": [call]}


def sse(events: list[dict[str, Any] | str], *, done: bool = True) -> bytes:
    """SSE bytes: dict events as JSON `data:` lines, str events verbatim (for malformed data)."""
    lines = [f"data: {json.dumps(e) if isinstance(e, dict) else e}\n\n" for e in events]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def sse_response(events: list[dict[str, Any] | str], *, done: bool = True) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(events, done=done))


def stalled_response(first: list[dict[str, Any]], release: asyncio.Event) -> httpx2.Response:
    """Send `first` at once, then hold the stream open until `release` is set (to test aborts mid-stream)."""

    async def body() -> AsyncIterator[bytes]:
        yield sse(first, done=False)
        await release.wait()
        yield b"data: [DONE]\n\n"

    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())


Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


class ScriptedServer:
    """Answers each request with the next scripted reply and records what was sent."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.replies:
            return httpx2.Response(500, text="no scripted reply left")
        reply = self.replies.pop(0)
        return reply(request) if callable(reply) else reply

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))
