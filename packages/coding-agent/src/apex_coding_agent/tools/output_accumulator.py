"""Bounded-memory collection of streamed command output (spec tools.md §6 "Output accumulator").

Only a rolling decoded tail is kept in memory; once the output outgrows the model-facing limits every raw byte
(including the ones seen earlier) is streamed to a temp file whose path is reported to the model.
"""

from __future__ import annotations

import codecs
import os
import secrets
import tempfile
from typing import BinaryIO

from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail

SPILL_FILE_PREFIX = "apex-code-bash-"


def new_spill_path(temp_dir: str | None = None) -> str:
    """A fresh `<tempdir>/apex-code-bash-<16 hex>.log` path."""
    return os.path.join(temp_dir or tempfile.gettempdir(), f"{SPILL_FILE_PREFIX}{secrets.token_hex(8)}.log")


class OutputAccumulator:
    """Feed raw chunks with `append`; read `snapshot()` at any time; call `close()` when done.

    Memory use stays around `2 * max_bytes` characters however much output arrives.
    """

    def __init__(
        self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES, temp_dir: str | None = None
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
        self._spill: BinaryIO | None = None
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
        self._spill = open(self.full_output_path, "wb")  # closed by close()
        for raw in self._early_raw:
            self._spill.write(raw)
        self._early_raw = []


__all__ = ["SPILL_FILE_PREFIX", "OutputAccumulator", "new_spill_path"]
