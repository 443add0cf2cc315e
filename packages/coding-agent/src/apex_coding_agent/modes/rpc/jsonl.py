"""Strict JSONL framing for RPC mode (spec modes.md §7).

Input: records end at LF (byte 0x0A) only; one trailing CR is stripped; U+2028/U+2029 and every
other Unicode line break are ordinary characters (never `str.splitlines()`). Bytes are split
before decoding, which is safe because 0x0A never occurs inside a multi-byte UTF-8 sequence, so a
character split across reads is decoded whole. Invalid UTF-8 becomes U+FFFD (the JSON parse then
reports the line). A final line without LF is still a record when the input ends.

Output: one compact JSON object per line (`JSON.stringify` separators, non-ASCII unescaped),
written and flushed under one lock so lines from concurrent producers never interleave.
"""

from __future__ import annotations

import json
import threading
from typing import Any, BinaryIO, Protocol


class LineDecoder:
    """Incremental splitter: feed byte chunks, get back complete text records."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0  # bytes already known to hold no LF: long lines are not rescanned per chunk

    def feed(self, chunk: bytes) -> list[str]:
        """Add bytes; returns the records completed by them (possibly none)."""
        self._buffer += chunk
        lines: list[str] = []
        start = 0
        search_from = self._scanned
        while True:
            end = self._buffer.find(b"\n", search_from)
            if end < 0:
                break
            lines.append(_decode(self._buffer[start:end]))
            start = search_from = end + 1
        if start:
            del self._buffer[:start]
        self._scanned = len(self._buffer)
        return lines

    def finish(self) -> list[str]:
        """End of input: the unterminated rest, if any, is the last record."""
        if not self._buffer:
            return []
        rest = _decode(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return [rest]


def _decode(raw: bytes | bytearray) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


def dumps_line(obj: Any) -> bytes:  # Any: any JSON-ready value (dicts from wire models, lists, scalars)
    """One output record: compact JSON, non-ASCII unescaped, ending in LF.

    Lone surrogates (a client may send `"\\ud800"`, and ids are echoed back) cannot be encoded as
    UTF-8; such a record is written with ASCII escapes instead, which is what `JSON.stringify` does
    for them.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


class _Flushable(Protocol):
    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> object: ...


class JsonlWriter:
    """Thread-safe line writer over a binary stream (normally `sys.stdout.buffer`).

    Writes block until the stream accepts them, which is the backpressure the spec asks for: a
    slow reader slows the producer instead of growing a buffer without bound.
    """

    def __init__(self, stream: BinaryIO | _Flushable) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def write(self, obj: Any) -> None:  # Any: see dumps_line
        """Serialize and write one record; silently dropped once the stream is closed or broken."""
        data = dumps_line(obj)
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                # The reader went away (or the stream was closed under us): nothing can be reported
                # anywhere, and the EOF of stdin will end the mode.
                self.closed = True

    def close(self) -> None:
        with self._lock:
            self.closed = True


__all__ = ["JsonlWriter", "LineDecoder", "dumps_line"]
