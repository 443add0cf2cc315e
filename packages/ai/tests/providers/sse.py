"""A scripted HTTP server for provider tests, served by `httpx2.MockTransport`.

Replies are queued `httpx2.Response`s; every request is recorded (method, path, headers, JSON
body). SSE bodies can be sent whole, or held open at a gate so a test can abort mid-stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2


def sse_event(name: str | None, data: dict[str, Any] | str) -> str:
    """One SSE event; dict data is sent as JSON, str data verbatim (to script malformed JSON)."""
    text = json.dumps(data) if isinstance(data, dict) else data
    head = f"event: {name}\n" if name is not None else ""
    return f"{head}data: {text}\n\n"


def typed_events(events: list[dict[str, Any]]) -> str:
    """SSE text for Anthropic-style events, each named by its own `type`."""
    return "".join(sse_event(str(event["type"]), event) for event in events)


class GatedBody(httpx2.AsyncByteStream):
    """An SSE body that sends `before`, then waits for `gate` (forever if never set), then sends `after`."""

    def __init__(self, before: str, after: str = "", gate: asyncio.Event | None = None) -> None:
        self.before = before.encode()
        self.after = after.encode()
        self.gate = gate or asyncio.Event()
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.before:
            yield self.before
        await self.gate.wait()
        if self.after:
            yield self.after

    async def aclose(self) -> None:
        self.closed = True


def sse_response(
    body: str | httpx2.AsyncByteStream, *, status: int = 200, headers: dict[str, str] | None = None
) -> httpx2.Response:
    all_headers = {"content-type": "text/event-stream", **(headers or {})}
    if isinstance(body, str):
        return httpx2.Response(status, headers=all_headers, content=body.encode())
    return httpx2.Response(status, headers=all_headers, stream=body)


def json_response(status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None) -> httpx2.Response:
    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))
    return httpx2.Response(status, headers={"content-type": "application/json", **(headers or {})}, content=text)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: httpx2.Headers
    body: Any


@dataclass
class ScriptedServer:
    """Answers each request with the next queued reply (a response, or a callable making one)."""

    replies: list[httpx2.Response | Callable[[httpx2.Request], httpx2.Response]] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else None
        self.requests.append(RecordedRequest(request.method, request.url.path, request.headers, body))
        if not self.replies:
            return json_response(500, {"type": "error", "error": {"type": "api_error", "message": "no reply"}})
        reply = self.replies.pop(0)
        return reply(request) if callable(reply) else reply

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))


PEER_CLOSED = "peer closed connection without sending complete message body (incomplete chunked read)"


class CutBody(httpx2.AsyncByteStream):
    """A body that sends `before`, then fails the way a connection dropped mid-body does."""

    def __init__(self, before: bytes) -> None:
        self.before = before

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.before
        raise httpx2.RemoteProtocolError(PEER_CLOSED)


class NeverAnswers:
    """A MockTransport handler whose request never gets an answer; records that it started and was cancelled."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.arrived.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")
