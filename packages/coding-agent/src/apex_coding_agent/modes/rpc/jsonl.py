"""Strict JSONL framing for RPC mode.

Input: records end at LF (byte 0x0A) only; one trailing CR is stripped; U+2028/U+2029 and every
other Unicode line break are ordinary characters (never `str.splitlines()`). Bytes are split
before decoding, which is safe because 0x0A never occurs inside a multi-byte UTF-8 sequence, so a
character split across reads is decoded whole. Invalid UTF-8 becomes U+FFFD (the JSON parse then
reports the line). A final line without LF is still a record when the input ends.

An empty final piece (nothing, or a lone CR, after the last LF) is not a record.

Output: one compact JSON object per line (`JSON.stringify` separators, non-ASCII unescaped except
U+2028/U+2029, which are written as `\u2028`/`\u2029` escapes like the reference writer does),
queued whole in call order and written by one thread, so lines from concurrent producers never interleave
and a client that stops reading never blocks the server (see `JsonlWriter`).

Input lines are capped at `MAX_LINE_BYTES`: a longer one is skipped without being kept in memory and
yields an `OversizedLine` in its place, so the server answers it with an error and reads on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import stat
import threading
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from apex_ai._wire import escape_lone_surrogates

READ_CHUNK = 64 * 1024


MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest input record accepted (without its LF and CR); a longer one becomes an `OversizedLine`."""


@dataclass(frozen=True)
class OversizedLine:
    """An input record longer than the cap, skipped unread; `size` is its length in bytes (LF excluded)."""

    size: int


class LineDecoder:
    """Incremental splitter: feed byte chunks, get back complete text records.

    The unterminated line is kept as the chunks it arrived in (never one growing buffer, whose reallocation would
    briefly hold it twice), at most `max_line` bytes plus one CR and one chunk: past that the line is only counted
    until its LF.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0  # bytes in _parts
        self._skipping: int | None = None  # bytes of the oversized line being dropped
        self._skipped_cr = False  # the last dropped byte was a CR

    @property
    def buffered(self) -> int:
        """Bytes of the unterminated line held in memory."""
        return self._size

    def feed(self, chunk: bytes) -> list[str | OversizedLine]:
        """Add bytes; returns the records completed by them (possibly none)."""
        lines: list[str | OversizedLine] = []
        pos = 0
        while True:
            end = chunk.find(b"\n", pos)
            piece = chunk[pos:] if end < 0 else chunk[pos:end]
            if self._skipping is not None:
                self._skip(piece)
                if end >= 0:
                    lines.append(self._skipped())
            elif end < 0:
                if piece:
                    self._parts.append(piece)
                    self._size += len(piece)
                if self._size > self.max_line + 1:  # +1: the CR of a CRLF line that is just at the cap
                    self._skipping, self._skipped_cr = self._size, self._parts[-1].endswith(b"\r")
                    self._parts, self._size = [], 0
            elif self._parts:
                size = self._size + len(piece)
                cr = piece.endswith(b"\r") if piece else self._parts[-1].endswith(b"\r")
                if size - cr > self.max_line:  # counted before joining: an oversized line is never copied
                    lines.append(OversizedLine(size - cr))
                else:
                    lines.append(_decode(b"".join([*self._parts, piece])))
                self._parts, self._size = [], 0
            else:
                lines.append(self._record(piece))
            if end < 0:
                return lines
            pos = end + 1

    def finish(self) -> list[str | OversizedLine]:
        """End of input: the unterminated rest, if any, is the last record."""
        if self._skipping is not None:
            return [self._skipped()]
        rest = self._record(b"".join(self._parts))
        self._parts, self._size = [], 0
        return [rest] if rest else []

    def _skip(self, piece: bytes) -> None:
        assert self._skipping is not None
        if piece:
            self._skipping += len(piece)
            self._skipped_cr = piece.endswith(b"\r")

    def _skipped(self) -> OversizedLine:
        assert self._skipping is not None
        size = self._skipping - (1 if self._skipped_cr else 0)
        self._skipping, self._skipped_cr = None, False
        return OversizedLine(size)

    def _record(self, raw: bytes) -> str | OversizedLine:
        size = len(raw) - (1 if raw.endswith(b"\r") else 0)
        return OversizedLine(size) if size > self.max_line else _decode(raw)


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


OUTPUT_HIGH_WATER = 1024 * 1024
"""Queued output bytes above which the writer reports congestion (command output is then read no further)."""
OUTPUT_LOW_WATER = 256 * 1024
"""Queued output bytes at or below which a congested writer counts as drained again."""
OUTPUT_STALL_SECONDS = 3.0
"""At the end, how long `flush` waits for a client that reads nothing before the rest is dropped."""


class JsonlWriter:
    """Line writer over a binary stream (normally `sys.stdout.buffer`); `write` never blocks.

    Records are queued in call order (from any thread) and written by one daemon thread, so a client that reads
    slowly or not at all never stalls the event loop: commands are still read and answered, and stdin EOF is
    still seen. The queue is bounded by its producers: command output, the one producer that can outrun any
    client, stops reading while `congested()` (see `OutputPacer`), and everything else is bounded by the
    commands that asked for it. Call `flush` before the process exits.
    """

    def __init__(self, stream: BinaryIO | _Flushable) -> None:
        self._stream = stream
        self._fd = _file_descriptor(stream)
        self._cond = threading.Condition()
        self._queue: deque[bytes] = deque()
        self._queued = 0
        self._written = 0
        self._thread: threading.Thread | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._busy = False  # the thread is writing a batch it took off the queue
        self.closed = False

    def write(self, obj: Any) -> None:  # Any: see dumps_line
        """Serialize and queue one record; silently dropped once the stream is closed or broken."""
        self._put(dumps_line(obj))

    def write_raw(self, line: str) -> None:
        """Queue one record already serialized as JSON text (without its LF)."""
        self._put(_line_bytes(line))

    @property
    def queued_bytes(self) -> int:
        """Bytes accepted by `write` and not yet written to the stream."""
        return self._queued

    def congested(self) -> bool:
        """More than `OUTPUT_HIGH_WATER` bytes wait for the client."""
        return self._queued > OUTPUT_HIGH_WATER and not self.closed

    async def drained(self) -> None:
        """Return once at most `OUTPUT_LOW_WATER` bytes wait (or the stream closed)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._cond:
            if self._queued <= OUTPUT_LOW_WATER or self.closed:
                return
            self._waiters.append((loop, future))
        await future

    async def flush(self, stall: float = OUTPUT_STALL_SECONDS) -> bool:
        """Wait until everything queued is written; True when it was, False when the writer is (now) closed.

        Gives up, closing the writer, once nothing was written for `stall` seconds: a client that stopped reading
        must not keep the process alive.
        """
        loop = asyncio.get_running_loop()
        last, since = self._written, loop.time()
        while True:
            with self._cond:
                if self.closed:
                    return False
                if not self._queue and not self._busy:
                    return True
                written = self._written
            if written != last:
                last, since = written, loop.time()
            elif loop.time() - since > stall:
                self.close()
                return False
            await asyncio.sleep(0.01)

    def close(self) -> None:
        """Drop whatever is queued and write nothing more."""
        with self._cond:
            self.closed = True
            self._drop_locked()

    # ----------------------------------------------------------------- the writing thread

    def _put(self, data: bytes) -> None:
        with self._cond:
            if self.closed:
                return
            if not self._queue and not self._busy and self._write_now(data):
                return
            self._queue.append(data)
            self._queued += len(data)
            self._start_locked()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self.closed:
                    self._cond.wait()
                if self.closed:
                    return
                batch = [self._queue.popleft()]
                size = len(batch[0])
                # Small records go out together: one write (and flush) per batch, not per line.
                while self._queue and size < _BATCH_BYTES:
                    batch.append(self._queue.popleft())
                    size += len(batch[-1])
                self._busy = True
            try:
                self._write_out(b"".join(batch) if len(batch) > 1 else batch[0])
            except (OSError, ValueError):
                # The reader went away (or the stream was closed under us): nothing can be reported
                # anywhere, and the EOF of stdin will end the mode.
                self.close()
                with self._cond:
                    self._busy = False
                    self._wake_locked()
                return
            with self._cond:
                self._busy = False
                self._queued -= size
                self._written += size
                if self._queued <= OUTPUT_LOW_WATER:
                    self._wake_locked()

    def _write_now(self, data: bytes) -> bool:
        """Write a small record at once when that cannot block; False: the thread must take it.

        A response handed to the thread costs a thread switch each way, which doubled a short command's round
        trip. With nothing queued (so order is kept) a record of at most PIPE_BUF bytes goes out in one write
        that cannot block when the descriptor polls writable: a pipe then has room for it whole.
        """
        if self._fd is None or len(data) > select.PIPE_BUF:
            return False
        try:
            if not select.select([], [self._fd], [], 0)[1]:
                return False
            written = os.write(self._fd, data)
        except (OSError, ValueError):
            self.closed = True  # the reader went away: as in the thread, nothing more can be written
            self._drop_locked()
            return True
        if written < len(data):  # not for a pipe (atomic up to PIPE_BUF); a terminal or socket may take part
            self._queue.append(data[written:])
            self._queued += len(data) - written
            self._start_locked()
        self._written += written
        return True

    def _start_locked(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rpc-stdout", daemon=True)
            self._thread.start()
        self._cond.notify()

    def _write_out(self, data: bytes) -> None:
        if self._fd is None:
            self._stream.write(data)
            self._stream.flush()
            return
        # The file descriptor, not the buffered stream: a thread blocked here holds no lock of sys.stdout, which
        # the interpreter would otherwise wait for forever at exit when the client reads nothing.
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def _drop_locked(self) -> None:
        self._queue.clear()
        self._queued = 0
        self._wake_locked()
        self._cond.notify_all()

    def _wake_locked(self) -> None:
        waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: its waiter is gone with it
                loop.call_soon_threadsafe(_resolve, future)


_BATCH_BYTES = 64 * 1024


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _file_descriptor(stream: BinaryIO | _Flushable) -> int | None:
    """The descriptor to write to directly, after flushing what the stream itself buffered; None: use the stream."""
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        return None
    try:
        fd = int(fileno())
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    stream.flush()
    return fd


async def read_records(stream: BinaryIO, max_line: int = MAX_LINE_BYTES) -> AsyncIterator[str | OversizedLine]:
    """Yield the records of `stream` (normally `sys.stdin.buffer`) without blocking the event loop.

    Pipes and sockets are read by the loop itself. A terminal (its file description is shared with
    stdout, so it must stay blocking) or a regular file (not pollable) is read by a daemon thread.
    """
    decoder = LineDecoder(max_line)
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


__all__ = ["MAX_LINE_BYTES", "JsonlWriter", "LineDecoder", "OversizedLine", "dumps_line", "read_records"]
