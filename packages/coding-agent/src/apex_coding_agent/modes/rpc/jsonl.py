"""Strict JSONL framing for RPC mode (spec modes.md §7).

Input: records end at LF (byte 0x0A) only; one trailing CR is stripped; U+2028/U+2029 and every
other Unicode line break are ordinary characters (never `str.splitlines()`). Bytes are split
before decoding, which is safe because 0x0A never occurs inside a multi-byte UTF-8 sequence, so a
character split across reads is decoded whole. Invalid UTF-8 becomes U+FFFD (the JSON parse then
reports the line). A final line without LF is still a record when the input ends.

An empty final piece (nothing, or a lone CR, after the last LF) is not a record.

Output: one compact JSON object per line (`JSON.stringify` separators, non-ASCII unescaped except
U+2028/U+2029, which are written as `\u2028`/`\u2029` escapes like the reference writer does),
written and flushed under one lock so lines from concurrent producers never interleave.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, Protocol

from apex_ai._wire import escape_lone_surrogates

READ_CHUNK = 64 * 1024


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
        rest = _decode(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return [rest] if rest else []


def _decode(raw: bytes | bytearray) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


def _line_bytes(text: str) -> bytes:
    """JSON text as one output line: U+2028/U+2029 escaped, as the reference writer does (escaped, they cannot break
    a client that splits on Unicode line boundaries: Python's str.splitlines, JavaScript source embedding); lone
    surrogates escaped, as `JSON.stringify` does, so the line is valid UTF-8. Same JSON value either way."""
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return escape_lone_surrogates(text).encode("utf-8") + b"\n"


def dumps_line(obj: Any) -> bytes:  # Any: any JSON-ready value (dicts from wire models, lists, scalars)
    """One output record: compact JSON, non-ASCII unescaped, ending in LF (see `_line_bytes`)."""
    return _line_bytes(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


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

    def write_raw(self, line: str) -> None:
        """Write one record already serialized as JSON text (without its LF)."""
        data = _line_bytes(line)
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                self.closed = True

    def close(self) -> None:
        with self._lock:
            self.closed = True


async def read_records(stream: BinaryIO) -> AsyncIterator[str]:
    """Yield the records of `stream` (normally `sys.stdin.buffer`) without blocking the event loop.

    Pipes and sockets are read by the loop itself. A terminal (its file description is shared with
    stdout, so it must stay blocking) or a regular file (not pollable) is read by a daemon thread.
    """
    decoder = LineDecoder()
    async for chunk in _chunks(stream):
        for record in decoder.feed(chunk):
            yield record
    for record in decoder.finish():
        yield record


async def _chunks(stream: BinaryIO) -> AsyncIterator[bytes]:
    fd = stream.fileno()
    mode = os.fstat(fd).st_mode
    if (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and not os.isatty(fd):
        async for chunk in _pipe_chunks(stream):
            yield chunk
    else:
        async for chunk in _thread_chunks(fd):
            yield chunk


async def _pipe_chunks(stream: BinaryIO) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    try:
        while chunk := await reader.read(READ_CHUNK):
            yield chunk
    finally:
        transport.close()


async def _thread_chunks(fd: int) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)

    def pump() -> None:
        # b"" marks the end (EOF or a read error): there is nobody to report a read error to but the EOF path.
        while True:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
            except Exception:  # the loop is gone or was stopping: the mode already ended
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="rpc-stdin", daemon=True).start()
    while chunk := await queue.get():
        yield chunk


__all__ = ["JsonlWriter", "LineDecoder", "dumps_line", "read_records"]
