"""Read an OpenAI-style SSE response body as plain JSON values, skipping the SDK's typed models.

The `openai` SDK turns every event into a pydantic model (a recursive, unvalidated construction of
~30-100 µs per event) that our decoders would only turn back into fields. Both OpenAI adapters still
send through the SDK (request building, errors, retries) and then read the SDK stream's public
`response` with `sse_json`, which keeps the SDK's stream semantics:

- `data: [DONE]` ends the stream; the rest of the body (normally just its end) is then read for up to
  `DRAIN_SECONDS`, so that an HTTP/1.1 connection goes back to a keep-alive pool instead of being dropped;
- an event whose JSON object has a truthy `error` raises `StreamPayloadError` (the SDK raises its
  `APIError` there), with the `error` value as `body` and its message as text;
- an event without a blank line after it (a cut stream) is never delivered.

Connection failures surface as the `httpx2` errors they are; `_shared.format_http_error` names them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

DEFAULT_STREAM_ERROR = "An error occurred during streaming"
DRAIN_SECONDS = 0.25
"""How long a finished stream waits for the end of its body: long enough for the bytes that follow the last
event in the same packet or the next, short enough that a server holding the connection open costs little."""


async def drain(items: AsyncIterator[Any], seconds: float = DRAIN_SECONDS) -> None:  # Any: items are discarded
    """Read and discard what is left of `items` for at most `seconds` (see `DRAIN_SECONDS`)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            async for _ in items:
                pass


class LineSource(Protocol):
    """What `sse_json` reads: an `httpx2.Response` (its decoded lines)."""

    def aiter_lines(self) -> AsyncIterator[str]: ...


class StreamPayloadError(Exception):
    """The server sent an `{"error": ...}` object inside the stream."""

    def __init__(self, message: str, body: Any) -> None:  # Any: the JSON value of the `error` field
        super().__init__(message)
        self.body = body


def _raise_if_error(data: Any) -> None:  # Any: one parsed JSON value
    if not isinstance(data, Mapping) or not data.get("error"):
        return
    error = data["error"]
    message = error.get("message") if isinstance(error, Mapping) else None
    raise StreamPayloadError(message if isinstance(message, str) and message else DEFAULT_STREAM_ERROR, error)


async def sse_json(response: LineSource) -> AsyncIterator[Any]:  # Any: parsed JSON, shape checked by the decoders
    """Yield the JSON value of each complete SSE event of `response`, until `[DONE]` or the end of the body."""
    data: list[str] = []
    lines = response.aiter_lines()
    async for line in lines:
        if line:
            if line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
            # `event:`, `id:`, `retry:` and `:` comments carry nothing the decoders need: every
            # OpenAI event repeats its name as the JSON `type`.
            continue
        if not data:
            continue
        text = "\n".join(data)
        data = []
        if text.startswith("[DONE]"):
            await drain(lines)
            return
        parsed = json.loads(text)
        _raise_if_error(parsed)
        yield parsed


__all__ = ["DEFAULT_STREAM_ERROR", "DRAIN_SECONDS", "LineSource", "StreamPayloadError", "drain", "sse_json"]
