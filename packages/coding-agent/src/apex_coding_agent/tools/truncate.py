"""Shared output limits and truncation helpers.

Every tool keeps what it sends to the model under `DEFAULT_MAX_LINES` lines and `DEFAULT_MAX_BYTES` UTF-8 bytes, and
only ever cuts at line boundaries (except `truncate_tail`'s last-line fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 51200
GREP_MAX_LINE_LENGTH = 500

TruncatedBy = Literal["lines", "bytes"]


@dataclass(frozen=True)
class TruncationResult:
    """What a truncation kept and why. `to_wire()` gives the camelCase dict stored in tool `details`."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def split_lines(text: str) -> list[str]:
    """Lines of `text`: `""` has none, and a single trailing newline does not start another line."""
    if text == "":
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def count_lines(text: str) -> int:
    return len(split_lines(text))


def format_size(num_bytes: int) -> str:
    """Human size: `1023B`, `50.0KB`, `1.5MB`."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"


def _untruncated(text: str, lines: int, size: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(text, False, None, lines, size, lines, size, False, False, max_lines, max_bytes)


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the start within both limits; never emits a partial line."""
    lines = split_lines(text)
    total_bytes = _utf8_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _untruncated(text, len(lines), total_bytes, max_lines, max_bytes)
    if _utf8_len(lines[0]) > max_bytes:
        return TruncationResult("", True, "bytes", len(lines), total_bytes, 0, 0, False, True, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for index, line in enumerate(lines):
        if index >= max_lines:
            truncated_by = "lines"
            break
        cost = _utf8_len(line) + (1 if index > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    content = "\n".join(kept)
    return TruncationResult(
        content, True, truncated_by, len(lines), total_bytes, len(kept), used, False, False, max_lines, max_bytes
    )


def _tail_bytes(line: str, max_bytes: int) -> str:
    """The last `max_bytes` UTF-8 bytes of `line`, advanced to a character boundary."""
    raw = line.encode("utf-8", "surrogatepass")[-max_bytes:]
    start = 0
    while start < len(raw) and (raw[start] & 0xC0) == 0x80:
        start += 1
    return raw[start:].decode("utf-8", "replace")


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the end; if even the last line is too big, keep the end of it."""
    lines = split_lines(text)
    total_bytes = _utf8_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _untruncated(text, len(lines), total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for line in reversed(lines):
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        cost = _utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    last_line_partial = False
    if not kept:
        partial = _tail_bytes(lines[-1], max_bytes)
        kept = [partial]
        used = _utf8_len(partial)
        last_line_partial = True
        truncated_by = "bytes"
    kept.reverse()
    content = "\n".join(kept)
    return TruncationResult(
        content,
        True,
        truncated_by,
        len(lines),
        total_bytes,
        len(kept),
        used,
        last_line_partial,
        False,
        max_lines,
        max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> str:
    """`line` cut to `max_chars` characters plus a `... [truncated]` marker when longer."""
    if len(line) <= max_chars:
        return line
    return line[:max_chars] + "... [truncated]"


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "TruncatedBy",
    "TruncationResult",
    "count_lines",
    "format_size",
    "split_lines",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]
