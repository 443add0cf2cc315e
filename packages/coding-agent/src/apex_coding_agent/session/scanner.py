"""The scanner: indexes a session file's lines without parsing their JSON.

Loading is built for large files. A line written by Apex or pi starts with
`{"type":..,"id":..,"parentId":..,"timestamp":..`; the scanner reads those four fields with one anchored regex
match and keeps only the line's byte offsets, so the tree of a 100 MB file is indexed without parsing its JSON.
The file is read in blocks and its bytes are not kept: a line is read back from the file when its entry is first
needed (see `records`). Lines in any other shape are parsed with `json` at once. A line that is not valid JSON is
reported as `file:line` and skipped, but its bytes are kept so that a rewrite (migration) puts it back where it was:
nothing read from a file is ever dropped or re-serialized unless a migration changed it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from apex_coding_agent.collector import collector_paused
from apex_coding_agent.session.entries import CURRENT_SESSION_VERSION, SessionHeader, parse_entry, parse_header
from apex_coding_agent.session.file_errors import NotARegularFileError, open_regular
from apex_coding_agent.session.records import BufferSource, FileSource, LineSource, Record, SessionIssue, short_reason

_FAST_PREFIX = re.compile(
    rb'\{"type":"([^"\\]*)","id":"([^"\\]*)","parentId":(?:null|"([^"\\]*)"),"timestamp":"([^"\\]*)"'
)
_CLOSE_BRACE = ord("}")
_WHITESPACE = b" \t\r\n"
_BLOCK = 1 << 22  # bytes read per block while scanning a file


@dataclass(frozen=True, slots=True)
class RawLine:
    """A line kept only for its bytes (unparsable or not an entry)."""

    line_no: int
    raw: bytes


@dataclass(slots=True)
class LoadedFile:
    """Result of scanning a file. `header` None means "not a session" (then `records` is empty)."""

    path: Path
    size: int
    header: SessionHeader | None
    header_raw: bytes
    records: list[Record]
    kept_lines: list[RawLine]
    issues: list[SessionIssue]
    ends_with_newline: bool


class _Scanner:
    """Indexes lines fed to it block by block (see the module docstring); never raises for bad content."""

    def __init__(self, source: LineSource) -> None:
        self.source = source
        self.header: SessionHeader | None = None
        self.header_raw = b""
        self.records: list[Record] = []
        self.kept: list[RawLine] = []
        self.line_no = 0
        self.not_a_session = False
        self._types: dict[bytes, str] = {}

    def feed(self, block: bytes, base: int, final: bool) -> int:
        """Index the complete lines of `block` (which starts at file offset `base`); with `final`, the last line
        even without its newline. Returns how many bytes of `block` were consumed (a partial last line is not)."""
        size = len(block)
        find = block.find
        match = _FAST_PREFIX.match
        append = self.records.append
        source = self.source
        types = self._types
        line_no = self.line_no
        pos = 0
        while pos < size:
            newline = find(b"\n", pos)
            if newline < 0 and not final:
                self.line_no = line_no
                return pos
            end = size if newline < 0 else newline
            line_no += 1
            start, stop = pos, end - 1 if end > pos and block[end - 1] == 13 else end
            pos = end + 1
            if start == stop or (block[start] in _WHITESPACE and not block[start:stop].strip()):
                continue
            if self.header is not None:
                m = match(block, start, stop)
                # A line without its newline may be a torn final write: parse it fully to be sure it is whole.
                if m is not None and newline >= 0 and block[stop - 1] == _CLOSE_BRACE:
                    kind, entry_id, parent, stamp = m.group(1, 2, 3, 4)
                    type_ = types.get(kind)
                    if type_ is None:
                        # Types repeat on every line: one shared string each instead of one per record.
                        type_ = types[kind] = sys.intern(kind.decode())
                    append(
                        Record(
                            type_,
                            entry_id.decode(),
                            None if parent is None else parent.decode(),
                            stamp.decode(),
                            source,
                            base + start,
                            base + stop,
                            line_no,
                        )
                    )
                    continue
            self.line_no = line_no
            if not self._slow_line(block, start, stop, base):
                self.not_a_session = True
                return size
        self.line_no = line_no
        return size

    def _slow_line(self, block: bytes, start: int, end: int, base: int) -> bool:
        """Parse a line that is not in the fast shape; False when the file turns out not to be a session."""
        line_no, raw = self.line_no, block[start:end]
        try:
            data: Any = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly nested JSON is corrupt too
            self.source.report(line_no, f"not valid JSON: {short_reason(exc)}")
            self.kept.append(RawLine(line_no, raw))
            return True
        if self.header is None:
            self.header = parse_header(data)
            # The first parsed record is not a header: not a session, nothing more to read.
            self.header_raw = raw
            if self.header is not None and (self.header.version or 1) < CURRENT_SESSION_VERSION:
                # v1 entries have no id/parentId yet: every line would "fail" although migration fixes it.
                self.source.quiet = True
            return self.header is not None
        if not isinstance(data, dict):
            # Valid JSON but no entry (`[1, 2]`, `null`): reported and kept, like any corrupt line.
            self.source.report(line_no, f"not a session entry: expected a JSON object, found {type(data).__name__}")
            self.kept.append(RawLine(line_no, raw))
            return True
        try:
            entry = parse_entry(data)
        except ValidationError as exc:
            self.source.report(line_no, f"not a session entry: {short_reason(exc)}")
            self.kept.append(RawLine(line_no, raw))
            return True
        self.records.append(
            Record(
                entry.type,
                entry.id,
                entry.parent_id,
                entry.timestamp,
                self.source,
                base + start,
                base + end,
                line_no,
                entry,
            )
        )
        return True

    def result(self, path: Path, size: int, ends_with_newline: bool) -> LoadedFile:
        if self.not_a_session or self.header is None:
            return LoadedFile(path, size, None, b"", [], [], self.source.issues, ends_with_newline)
        return LoadedFile(
            path, size, self.header, self.header_raw, self.records, self.kept, self.source.issues, ends_with_newline
        )


def scan_bytes(path: Path, buffer: bytes) -> LoadedFile:
    """Index a session file's bytes held in memory (records read back from `buffer`)."""
    scanner = _Scanner(BufferSource(path, buffer))
    scanner.feed(buffer, 0, final=True)
    return scanner.result(path, len(buffer), buffer.endswith(b"\n"))


def read_session_file(path: Path, block_size: int = _BLOCK) -> LoadedFile:
    """Read and index `path` (must exist) in blocks of `block_size` bytes; the bytes are not kept (`FileSource`).

    Raises `NotARegularFileError` for a directory, FIFO or device (never opened for reading)."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        source = FileSource(path, fd)
    except BaseException:
        os.close(fd)
        raise
    scanner = _Scanner(source)
    with collector_paused(os.fstat(fd).st_size >= _BLOCK):  # a large file: many records, all kept
        size, last = _scan(fd, scanner, block_size)
    return scanner.result(path, size, last == b"\n")


def _scan(fd: int, scanner: _Scanner, block_size: int) -> tuple[int, bytes]:
    """Feed the file to `scanner` block by block; returns its size and last byte."""
    offset, want, last = 0, block_size, b""
    while True:
        # Each block starts at the first unconsumed byte, so a line split by a block boundary is read again whole.
        block = os.pread(fd, want, offset)
        final = len(block) < want
        used = scanner.feed(block, offset, final)
        if block:
            last = block[-1:]
        if final or scanner.not_a_session:
            size = offset + len(block)
            break
        # No complete line in a full block: a line longer than the block, read it with a larger one.
        want = want * 2 if used == 0 else block_size
        offset += used
    return size, last


def read_header(path: Path) -> SessionHeader | None:
    """The header of `path` read from its first parsable line only, or None (not a session / unreadable)."""
    try:
        with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    return parse_header(json.loads(line))
                except (ValueError, RecursionError):
                    continue
    except (OSError, NotARegularFileError):
        return None
    return None


def file_version(loaded: LoadedFile) -> int:
    return 1 if loaded.header is None or loaded.header.version is None else loaded.header.version


__all__ = ["LoadedFile", "RawLine", "file_version", "read_header", "read_session_file", "scan_bytes"]
