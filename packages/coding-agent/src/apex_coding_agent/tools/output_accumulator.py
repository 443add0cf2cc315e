"""Bounded-memory collection of streamed command output.

Only a rolling decoded tail is kept in memory; once the output outgrows the model-facing limits the raw bytes
(including the ones seen earlier) are streamed to a temp file whose path is reported to the model. That log keeps
the head and the tail of the output (`CappedLog`) and is deleted when the session ends or the process exits.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import secrets
import tempfile

from apex_coding_agent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail

SPILL_FILE_PREFIX = "apex-code-bash-"
LOG_HEAD_BYTES = 8 * 1024 * 1024
"""How much of the start of a command's output its log keeps."""
LOG_TAIL_BYTES = 8 * 1024 * 1024
"""How much of the end of a command's output its log keeps (between the two: a marker with the omitted size)."""

_logs: set[str] = set()
_atexit_registered = False


def new_spill_path(temp_dir: str | None = None) -> str:
    """A fresh `<tempdir>/apex-code-bash-<16 hex>.log` path."""
    return os.path.join(temp_dir or tempfile.gettempdir(), f"{SPILL_FILE_PREFIX}{secrets.token_hex(8)}.log")


def remove_output_logs() -> None:
    """Delete every command output log this process wrote (at the end of a session, and at exit)."""
    for path in list(_logs):
        with contextlib.suppress(OSError):
            os.unlink(path)
        _logs.discard(path)


def _register(path: str) -> None:
    global _atexit_registered
    _logs.add(path)
    if not _atexit_registered:
        # Registered on first use, not at import: a process that runs no command has nothing to clean up.
        atexit.register(remove_output_logs)
        _atexit_registered = True


class CappedLog:
    """A command's output log: the first `head` bytes, then a marker line naming how many bytes were left out,
    then the last `tail` bytes. While output arrives the file holds at most `head + 2 * tail` bytes plus the marker.

    The file is removed by `remove_output_logs` (session end, process exit).
    """

    def __init__(self, path: str, head: int = LOG_HEAD_BYTES, tail: int = LOG_TAIL_BYTES) -> None:
        self.path = path
        self._head_limit = head
        self._tail_limit = tail
        self._file = open(path, "w+b")  # closed by close()
        _register(path)
        self._head = 0  # bytes of the head written
        self._tail_start = 0  # file offset where the kept tail begins (after the marker, once there is one)
        self._tail = 0  # bytes of tail in the file
        self.omitted = 0

    def write(self, data: bytes) -> None:
        if self._head < self._head_limit:
            take = data[: self._head_limit - self._head]
            self._file.write(take)
            self._head += len(take)
            self._tail_start = self._head
            data = data[len(take) :]
        if not data:
            return
        self._file.write(data)
        self._tail += len(data)
        if self._tail > 2 * self._tail_limit:
            self._compact()

    def close(self) -> None:
        if self._file.closed:
            return
        if self._tail > self._tail_limit:
            self._compact()
        self._file.close()

    def _compact(self) -> None:
        """Keep the last `tail` bytes (from a character boundary) after a fresh marker. Amortized: at most one copy
        of each byte, since this runs once per `tail` bytes written."""
        self._file.seek(self._tail_start + self._tail - self._tail_limit)
        kept = self._file.read(self._tail_limit)
        skip = 0
        while skip < min(3, len(kept)) and 0x80 <= kept[skip] < 0xC0:  # UTF-8 continuation bytes
            skip += 1
        self.omitted += self._tail - len(kept) + skip
        marker = f"\n\n[... {self.omitted} bytes omitted ...]\n\n".encode()
        self._file.seek(self._head)
        self._file.write(marker)
        self._file.write(kept[skip:])
        self._file.truncate()
        self._tail_start = self._head + len(marker)
        self._tail = len(kept) - skip


class OutputAccumulator:
    """Feed raw chunks with `append`; read `snapshot()` at any time; call `close()` when done.

    Memory use stays around `2 * max_bytes` characters however much output arrives.
    """

    def __init__(
        self,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_dir: str | None = None,
        log_head: int = LOG_HEAD_BYTES,
        log_tail: int = LOG_TAIL_BYTES,
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.temp_dir = temp_dir
        self.total_bytes = 0
        self.decoded_bytes = 0
        self.newlines = 0
        self.full_output_path: str | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._tail_parts: list[str] = []
        self._tail_len = 0
        self._tail_cap = 2 * max_bytes
        self._early_raw: list[bytes] = []
        self._log_limits = (log_head, log_tail)
        self._spill: CappedLog | None = None
        self._ends_with_newline = False
        self._current_line_bytes = 0
        self._last_complete_line_bytes = 0

    @property
    def total_lines(self) -> int:
        """Lines of the whole output; a trailing newline does not start another line."""
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self._ends_with_newline else 1)

    @property
    def last_line_bytes(self) -> int:
        """Raw size of the last line of the output."""
        return self._last_complete_line_bytes if self._ends_with_newline else self._current_line_bytes

    def append(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self._track_lines(chunk)
        self._add_text(self._decoder.decode(chunk))
        if self._spill is not None:
            self._spill.write(chunk)
            return
        self._early_raw.append(chunk)
        if self.total_bytes > self.max_bytes or self.decoded_bytes > self.max_bytes or self.newlines > self.max_lines:
            self._open_spill()

    def finish(self) -> None:
        """Flush an incomplete UTF-8 sequence at the end of the output."""
        self._add_text(self._decoder.decode(b"", final=True))

    def snapshot(self) -> TruncationResult:
        return truncate_tail("".join(self._tail_parts), self.max_lines, self.max_bytes)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _track_lines(self, chunk: bytes) -> None:
        count = chunk.count(b"\n")
        self.newlines += count
        self._ends_with_newline = chunk.endswith(b"\n")
        if count == 0:
            self._current_line_bytes += len(chunk)
            return
        last = chunk.rfind(b"\n")
        if count == 1:
            self._last_complete_line_bytes = self._current_line_bytes + last
        else:
            previous = chunk.rfind(b"\n", 0, last)
            self._last_complete_line_bytes = last - previous - 1
        self._current_line_bytes = len(chunk) - last - 1

    def _add_text(self, text: str) -> None:
        if not text:
            return
        self.decoded_bytes += len(text.encode("utf-8", "surrogatepass"))
        self._tail_parts.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self._tail_cap:
            # Trimming only after doubling keeps the cost of joins amortized constant per character.
            joined = "".join(self._tail_parts)[-self._tail_cap :]
            self._tail_parts = [joined]
            self._tail_len = len(joined)

    def _open_spill(self) -> None:
        self.full_output_path = new_spill_path(self.temp_dir)
        self._spill = CappedLog(self.full_output_path, *self._log_limits)  # closed by close()
        for raw in self._early_raw:
            self._spill.write(raw)
        self._early_raw = []


__all__ = [
    "LOG_HEAD_BYTES",
    "LOG_TAIL_BYTES",
    "SPILL_FILE_PREFIX",
    "CappedLog",
    "OutputAccumulator",
    "new_spill_path",
    "remove_output_logs",
]
