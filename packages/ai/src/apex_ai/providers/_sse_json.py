"""Read an OpenAI-style SSE response body as plain JSON values, skipping the SDK's typed models.

The `openai` SDK turns every event into a pydantic model (a recursive, unvalidated construction of
~30-100 µs per event) that our decoders would only turn back into fields. Both OpenAI adapters still
send through the SDK (request building, errors, retries) and then read the SDK stream's public
`response` with `sse_json`, which keeps the SDK's stream semantics:

- `data: [DONE]` ends the stream;
- an event whose JSON object has a truthy `error` raises `StreamPayloadError` (the SDK raises its
  `APIError` there), with the `error` value as `body` and its message as text;
- an event without a blank line after it (a cut stream) is never delivered.

Connection failures surface as the `httpx2` errors they are; `_shared.format_http_error` names them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

DEFAULT_STREAM_ERROR = "An error occurred during streaming"


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
    async for line in response.aiter_lines():
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
            return
        parsed = json.loads(text)
        _raise_if_error(parsed)
        yield parsed


__all__ = ["DEFAULT_STREAM_ERROR", "LineSource", "StreamPayloadError", "sse_json"]
