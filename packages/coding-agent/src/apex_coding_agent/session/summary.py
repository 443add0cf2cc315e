"""What a listing or a search needs from a session file, read line by line without building entries.

`SummaryReader` is fed complete lines (a whole file, or only the lines appended since the last read: every field
accumulates) and keeps the listing fields (header, name, counts, first user message, newest message time, leaf,
models, cost) plus the searchable texts of messages. It parses only what it needs: a tool result line is counted
from its first bytes and, unless tool output is indexed, never decoded, which is most of a session's bytes.

Both the session index and the plain scan (no index) read files through it, so they list the same things.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apex_coding_agent.session.entries import iso_to_ms, parse_header
from apex_coding_agent.session.file_errors import NotARegularFileError, open_regular

_PREFIX = re.compile(rb'\{"type":"([^"\\]*)","id":"([^"\\]*)"')
_TOOL_RESULT = b'"message":{"role":"toolResult"'
_ROLE_WINDOW = 320  # the role follows type, id, parentId and timestamp: within the first few hundred bytes
_BLOCK = 1 << 22
_FINGERPRINT = 64  # bytes before a resume point that must be unchanged for a tail read
TOOL_OUTPUT_CAP = 2000
"""Characters of one tool result kept for search when tool output is indexed."""
_CONTROL = str.maketrans("", "", "\x01\x02")  # snippet markers of the index: never part of stored text

# Kinds of searchable text, as stored in the index.
USER, ASSISTANT, TOOL_CALL, TOOL_OUTPUT = "user", "assistant", "tool", "output"


@dataclass(slots=True)
class TextRow:
    """One searchable text of a message: its entry id, kind (`USER`, ...) and text."""

    entry_id: str
    kind: str
    text: str


@dataclass(slots=True)
class Summary:
    """The listing fields of one session file (see the module docstring)."""

    session_id: str | None = None
    cwd: str = ""
    parent_session: str | None = None
    created: str | None = None
    name: str | None = None
    message_count: int = 0
    first_message: str | None = None
    newest_ms: int | None = None
    leaf_id: str | None = None
    models: list[str] = field(default_factory=list)
    cost: float = 0.0

    @property
    def is_session(self) -> bool:
        return self.session_id is not None


def _clean(text: str) -> str:
    """`text` without lone surrogates (JSON may escape them; SQLite and terminals take only valid UTF-8) and
    without the index's snippet markers."""
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode()
    if "\x01" in text or "\x02" in text:  # rare: `translate` on every text would cost more than the check
        text = text.translate(_CONTROL)
    return text


def _blocks_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def _tool_calls(content: object) -> list[str]:
    if not isinstance(content, list):
        return []
    calls = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            arguments = block.get("arguments")
            args = json.dumps(arguments, ensure_ascii=False) if arguments else ""
            calls.append(f"{block.get('name', '')} {args}".strip())
    return calls


class SummaryReader:
    """Accumulates a `Summary` and the `TextRow`s of the lines fed to it (see the module docstring)."""

    def __init__(self, summary: Summary | None = None, *, tool_output: bool = False) -> None:
        self.summary = summary if summary is not None else Summary()
        self.texts: list[TextRow] = []
        self.tool_output = tool_output
        self.not_a_session = False

    def feed_line(self, line: bytes) -> None:
        """Take one line (without its newline); blank, unparsable and foreign lines are skipped."""
        summary = self.summary
        if summary.session_id is None:
            self._header(line)
            return
        # Lines in the writer's shape (a fast prefix, ending in `}`) are taken at a glance when no field is needed.
        match = _PREFIX.match(line) if line.endswith(b"}") else None
        if match is not None and match.group(1) != b"message" and match.group(1) != b"session_info":
            summary.leaf_id = match.group(2).decode(errors="replace")
            return
        if match is not None and not self.tool_output and line.find(_TOOL_RESULT, 0, _ROLE_WINDOW) >= 0:
            summary.leaf_id = match.group(2).decode(errors="replace")
            summary.message_count += 1
            return
        try:
            data: Any = json.loads(line)  # Any: a JSON object checked field by field below
        except (ValueError, RecursionError):
            return
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return
        summary.leaf_id = _clean(data["id"])
        kind = data.get("type")
        if kind == "session_info":
            name = data.get("name")
            summary.name = (_clean(name).strip() or None) if isinstance(name, str) else None
        elif kind == "message" and isinstance(data.get("message"), dict):
            self._message(data["id"], data.get("timestamp"), data["message"])

    def _header(self, line: bytes) -> None:
        if not line.strip() or self.not_a_session:
            return
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return  # a corrupt line before the header is skipped, as the loader does
        header = parse_header(data)
        if header is None:
            self.not_a_session = True  # the first record is not a header: not a session file
            return
        summary = self.summary
        summary.session_id = _clean(header.id)
        summary.cwd = _clean(header.cwd or "")
        summary.parent_session = _clean(header.parent_session) if header.parent_session is not None else None
        summary.created = _clean(header.timestamp)

    def _message(self, entry_id: str, stamp: object, message: dict[str, Any]) -> None:
        summary = self.summary
        role = message.get("role")
        if role == "system":
            return  # the record of the prompt and tools, not a message of the conversation
        summary.message_count += 1
        content = message.get("content")
        if role == "toolResult":
            text = _blocks_text(content)[:TOOL_OUTPUT_CAP]
            if text:
                self._add(entry_id, TOOL_OUTPUT, text)
            return
        if role not in ("user", "assistant"):
            return
        text = _clean(_blocks_text(content))
        if text:
            self._add_clean(entry_id, USER if role == "user" else ASSISTANT, text)
        if role == "user" and summary.first_message is None:
            summary.first_message = text
        ms = message.get("timestamp")
        if not isinstance(ms, int) or not ms:
            ms = iso_to_ms(stamp) if isinstance(stamp, str) else 0
        if ms:
            summary.newest_ms = ms if summary.newest_ms is None else max(summary.newest_ms, ms)
        if role == "assistant":
            for call in _tool_calls(content):
                self._add(entry_id, TOOL_CALL, call)
            model = f"{message.get('provider', '')}/{message.get('model', '')}".strip("/")
            if model and model not in summary.models:
                summary.models.append(model)
            usage = message.get("usage")
            cost = usage.get("cost") if isinstance(usage, dict) else None
            total = cost.get("total") if isinstance(cost, dict) else None
            if isinstance(total, int | float):
                summary.cost += float(total)

    def _add(self, entry_id: str, kind: str, text: str) -> None:
        self.texts.append(TextRow(_clean(entry_id), kind, _clean(text)))

    def _add_clean(self, entry_id: str, kind: str, text: str) -> None:
        self.texts.append(TextRow(_clean(entry_id), kind, text))

    def feed(self, data: bytes, final: bool) -> int:
        """Feed the complete lines of `data`; with `final`, also a last line without its newline when it is whole
        JSON (a torn write is left for later). Returns how many bytes were consumed."""
        pos, size = 0, len(data)
        find = data.find
        while pos < size:
            newline = find(b"\n", pos)
            if newline < 0:
                if final and self._whole(data[pos:]):
                    self.feed_line(data[pos:].rstrip(b"\r"))
                    return size
                return pos
            self.feed_line(data[pos : newline - 1 if newline > pos and data[newline - 1] == 13 else newline])
            pos = newline + 1
            if self.not_a_session:
                return size
        return pos

    @staticmethod
    def _whole(line: bytes) -> bool:
        if not line.strip():
            return True
        try:
            json.loads(line)
        except (ValueError, RecursionError):
            return False
        return True


@dataclass(frozen=True, slots=True)
class Resume:
    """Where an earlier read of a file stopped: `read_to` bytes (ending in `fingerprint`) of inode `inode`."""

    read_to: int
    fingerprint: bytes
    inode: int
    summary: Summary


@dataclass(slots=True)
class FileRead:
    """The result of reading (the new part of) a file; `stamp` is its (size, mtime_ns, inode) when read."""

    stamp: tuple[int, int, int]
    read_to: int
    fingerprint: bytes
    not_a_session: bool
    summary: Summary
    texts: list[TextRow]
    from_start: bool
    bytes_read: int


def read_summary(path: Path, resume: Resume | None = None, *, tool_output: bool = False) -> FileRead | None:
    """Read `path` from `resume` when the file only grew since (same inode, the bytes before the resume point
    unchanged), else from the start. Complete lines only: a torn last line is left for the next read. None when
    the file is missing, unreadable or not a regular file."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except (OSError, NotARegularFileError):
        return None
    try:
        st = os.fstat(fd)
        start, summary = 0, None
        if (
            resume is not None
            and resume.inode == st.st_ino
            and resume.read_to <= st.st_size
            and _fingerprint(fd, resume.read_to) == resume.fingerprint
        ):
            start, summary = resume.read_to, resume.summary
        reader = SummaryReader(summary, tool_output=tool_output)
        offset, want = start, _BLOCK
        while offset < st.st_size and not reader.not_a_session:
            block = os.pread(fd, min(want, st.st_size - offset), offset)
            if not block:
                break
            final = offset + len(block) >= st.st_size
            used = reader.feed(block, final)
            if used == 0 and not final:
                want *= 2  # one line longer than the block: read it with a larger one
                continue
            offset += used
            want = _BLOCK
            if final:
                break
        return FileRead(
            (st.st_size, st.st_mtime_ns, st.st_ino),
            offset,
            _fingerprint(fd, offset),
            reader.not_a_session,
            reader.summary,
            reader.texts,
            start == 0,
            offset - start,
        )
    except OSError:
        return None
    finally:
        os.close(fd)


def _fingerprint(fd: int, end: int) -> bytes:
    start = max(0, end - _FINGERPRINT)
    return os.pread(fd, end - start, start) if end > start else b""


__all__ = [
    "ASSISTANT",
    "TOOL_CALL",
    "TOOL_OUTPUT",
    "USER",
    "FileRead",
    "Resume",
    "Summary",
    "SummaryReader",
    "TextRow",
    "read_summary",
]
