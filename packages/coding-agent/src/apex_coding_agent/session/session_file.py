"""The JSONL file layer: scanning, lazy entry parsing, migrations, appends and the single-writer lock.

Loading is built for large files (spec sessions.md §3, §7). A line written by Apex or pi starts with
`{"type":..,"id":..,"parentId":..,"timestamp":..`; the scanner reads those four fields with one anchored regex
match and keeps only the line's byte offsets, so the tree of a 100 MB file is indexed without parsing its JSON.
The file is read in blocks and its bytes are not kept: a line is read back from the file when its entry is first
needed, which is when it is validated (`Record.entry`, one `pread`), or in bulk (`parse_records`, a few large reads for
a whole branch). Validation goes straight from the JSON text to the model of the indexed type; a line that path
rejects is parsed again the reference way (`json.loads`, then `parse_entry`), which decides and reports. Lines in
any other shape are parsed with `json` at once. A line that is not valid JSON is reported as `file:line` and
skipped, but its bytes are kept so that a rewrite (migration) puts it back where it was: nothing read from a file
is ever dropped or re-serialized unless a migration changed it.
"""

from __future__ import annotations

import abc
import fcntl
import json
import logging
import os
import re
import stat
import sys
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from apex_coding_agent.collector import collector_paused
from apex_coding_agent.session.entries import (
    CURRENT_SESSION_VERSION,
    ENTRY_TYPES,
    EntryBase,
    SessionHeader,
    UnknownEntry,
    dump_dict_line,
    new_entry_id,
    parse_entry,
    parse_header,
)

logger = logging.getLogger(__name__)

_FAST_PREFIX = re.compile(
    rb'\{"type":"([^"\\]*)","id":"([^"\\]*)","parentId":(?:null|"([^"\\]*)"),"timestamp":"([^"\\]*)"'
)
_CLOSE_BRACE = ord("}")
_WHITESPACE = b" \t\r\n"
_BLOCK = 1 << 22  # bytes read per block while scanning a file
_SPAN = 1 << 22  # at most this many bytes per read when lines are read back in bulk (`parse_records`)
_SPAN_GAP = 1 << 16  # unneeded bytes between two needed lines worth reading through rather than a second read
PAUSE_AT = 2000  # entries parsed in one bulk from which the cyclic collector is paused


class SessionFileError(Exception):
    """A session file cannot be used as asked (not a session, locked, changed under us)."""


class SessionLockedError(SessionFileError):
    """Another process is the writer of this session file (or holds its id, see `SessionManager.lock_for_writing`)."""

    def __init__(self, path: Path, pid: int | None, subject: str | None = None, lock_name: str | None = None) -> None:
        holder = f"process {pid}" if pid is not None else "another process"
        what = subject if subject is not None else f"Session file {path}"
        super().__init__(f"{what} is in use by {holder} (lock: {lock_name or path.name + '.lock'})")
        self.path = path
        self.pid = pid


class SessionWriteError(SessionFileError):
    """Writing to a session file failed (disk full, file too large, read-only...): entries were not saved."""


class NotARegularFileError(SessionFileError):
    """The path names a directory, FIFO, device or socket: never read as a session, never written or replaced."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a session file")
        self.path = path
        self.kind = kind


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path: Path) -> bool:
    """True if `path` (symlinks followed) is a regular file, False if nothing is there; raises
    `NotARegularFileError` for anything else. Only `stat`: a FIFO or device is never opened."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(path, _kind(mode))
    return True


def open_regular(path: Path, flags: int) -> int:
    """`os.open` that only ever opens a regular file: checked with `stat` first (a FIFO would block, `/dev/zero`
    never ends), opened non-blocking, then checked again on the descriptor (the path may have changed between)."""
    check_regular(path)
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, _kind(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True, slots=True)
class SessionIssue:
    """A line of a session file that was skipped; `str()` gives `file:line: reason`."""

    path: str
    line_no: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line_no}: {self.reason}"


class Record:
    """One entry of the tree: its four index fields at once, the full entry on demand.

    A loaded record keeps its line's byte range in its file (read back when needed); an appended record keeps the
    bytes it wrote. `raw` is the exact line (without `\\n`) and is what any rewrite writes back.
    """

    __slots__ = ("_entry", "_end", "_source", "_start", "id", "line_no", "parent_id", "timestamp", "type")

    def __init__(
        self,
        type_: str,
        id_: str,
        parent_id: str | None,
        timestamp: str,
        source: _Source | bytes,
        start: int = 0,
        end: int = -1,
        line_no: int = 0,
        entry: EntryBase | None = None,
    ) -> None:
        self.type = type_
        self.id = id_
        self.parent_id = parent_id
        self.timestamp = timestamp
        self._source = source
        self._start = start
        self._end = end
        self.line_no = line_no
        self._entry = entry

    @classmethod
    def from_entry(cls, entry: EntryBase, raw: bytes) -> Record:
        return cls(entry.type, entry.id, entry.parent_id, entry.timestamp, raw, entry=entry)

    @property
    def raw(self) -> bytes:
        if isinstance(self._source, bytes):
            return self._source.rstrip(b"\n")
        return self._source.read(self._start, self._end)

    @property
    def is_parsed(self) -> bool:
        return self._entry is not None

    @property
    def entry(self) -> EntryBase:
        """The validated entry (parsed on first access). A line that turns out to be broken is reported and
        stands in as an `UnknownEntry` with its index fields, so the tree stays as it was indexed."""
        if self._entry is None:
            self._entry = self._parse()
        return self._entry

    def _parse(self, raw: bytes | None = None) -> EntryBase:
        """Validate the line (`raw`, else read back) straight from its JSON text with the model of its indexed
        type; a line that model rejects (or of a type without one) takes `parse_slow`, so every outcome, report
        included, is the one `parse_entry(json.loads(raw))` gives."""
        if raw is None:
            raw = self.raw
        model = ENTRY_TYPES.get(self.type)
        if model is not None:
            try:
                return model.model_validate_json(raw)
            except ValidationError:
                pass  # invalid JSON, another type after all, a malformed field: the slow path decides and reports
        return self.parse_slow(raw)

    def parse_slow(self, raw: bytes | None = None) -> EntryBase:
        """The reference parse: `json.loads`, then `parse_entry` on the dict (what every line took before the
        JSON-text fast path). A broken line is reported and stands in as an `UnknownEntry` with its index fields."""
        try:
            return parse_entry(json.loads(self.raw if raw is None else raw))
        except (ValueError, RecursionError, ValidationError) as exc:  # RecursionError: absurdly nested JSON
            if isinstance(self._source, _Source):
                self._source.report(self.line_no, f"invalid entry: {_short(exc)}")
            return UnknownEntry(type=self.type, id=self.id, parent_id=self.parent_id, timestamp=self.timestamp)


class _Source(abc.ABC):
    """Where the lines of one loaded file are read back from, plus where to report problems found later."""

    __slots__ = ("issues", "path", "quiet")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.issues: list[SessionIssue] = []
        self.quiet = False
        """Set for a file older than the current version: its lines are judged after migration (on the migrated
        file), so problems found before are recorded but not logged."""

    @abc.abstractmethod
    def read(self, start: int, end: int) -> bytes:
        """The bytes `start:end` of the file as it was scanned."""

    def report(self, line_no: int, reason: str) -> None:
        issue = SessionIssue(str(self.path), line_no, reason)
        self.issues.append(issue)
        if not self.quiet:
            logger.warning("skipping session line %s", issue)


class _BufferSource(_Source):
    """Lines kept in memory (a migrated file's new bytes)."""

    __slots__ = ("_buffer",)

    def __init__(self, path: Path, buffer: bytes) -> None:
        super().__init__(path)
        self._buffer = buffer

    def read(self, start: int, end: int) -> bytes:
        return self._buffer[start:end]


class _FileSource(_Source):
    """Lines read back with `pread` from a descriptor opened when the file was scanned.

    The file's bytes are not kept in memory: a 100 MB session costs its index, not its size. The descriptor pins
    the inode that was scanned, so a file replaced by rename (our rewrites, a migrating pi) still reads as it was;
    it is closed when the last record of the file is gone.
    """

    __slots__ = ("__weakref__", "_fd")

    def __init__(self, path: Path, fd: int) -> None:
        super().__init__(path)
        self._fd = fd
        weakref.finalize(self, os.close, fd)

    def read(self, start: int, end: int) -> bytes:
        return os.pread(self._fd, end - start, start)


def parse_records(records: Iterable[Record], *, span: int = _SPAN, gap: int = _SPAN_GAP) -> None:
    """Parse every record of `records` not parsed yet, exactly as `Record.entry` would, but in bulk.

    Lines of a loaded file are read back in a few large reads (runs of needed lines at most `span` bytes long,
    reading through gaps of unneeded lines up to `gap` bytes; a longer line is one read of its own) instead of one
    `pread` each. A bulk of at least `PAUSE_AT` entries is parsed with the cyclic garbage collector paused (and
    resumed after, if it was running): parsing allocates long-lived objects and no cyclic garbage, and the full
    collections that walk the growing heap would otherwise cost about as much as the parse itself. Only the given
    records are parsed (neighbours read through stay unparsed), so lazy views stay lazy; a line that fails is
    reported exactly as `Record.entry` reports it.
    """
    pending: dict[int, list[Record]] = {}  # file source id -> its records
    sources: dict[int, _FileSource] = {}
    others: list[Record] = []
    count = 0
    for record in records:
        if record._entry is not None:
            continue
        count += 1
        source = record._source
        if isinstance(source, _FileSource):
            sources[id(source)] = source
            pending.setdefault(id(source), []).append(record)
        else:
            others.append(record)
    if not count:
        return
    with collector_paused(count >= PAUSE_AT):
        for record in others:
            record.entry  # noqa: B018 - parses and caches
        for key, group in pending.items():
            _parse_spans(sources[key], group, span, gap)


def _parse_spans(source: _FileSource, group: list[Record], span: int, gap: int) -> None:
    group.sort(key=lambda record: record._start)
    index, size = 0, len(group)
    while index < size:
        first = group[index]
        span_start, span_end, stop = first._start, first._end, index + 1
        while stop < size:
            nxt = group[stop]
            if nxt._start - span_end > gap or nxt._end - span_start > span:
                break
            span_end = max(span_end, nxt._end)
            stop += 1
        data = source.read(span_start, span_end)
        for record in group[index:stop]:
            if record._entry is None:  # the same record may be listed twice
                record._entry = record._parse(data[record._start - span_start : record._end - span_start])
        index = stop


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


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _lines(buffer: bytes) -> Iterable[tuple[int, int, int, bool]]:
    """(line_no, start, end, has_newline) of each line, `\\r` before `\\n` excluded."""
    pos, size, line_no = 0, len(buffer), 0
    find = buffer.find
    while pos < size:
        newline = find(b"\n", pos)
        end = size if newline < 0 else newline
        line_no += 1
        stop = end - 1 if end > pos and buffer[end - 1] == 13 else end
        yield line_no, pos, stop, newline >= 0
        pos = end + 1


class _Scanner:
    """Indexes lines fed to it block by block (see the module docstring); never raises for bad content."""

    def __init__(self, source: _Source) -> None:
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
            self.source.report(line_no, f"not valid JSON: {_short(exc)}")
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
            self.source.report(line_no, f"not a session entry: {_short(exc)}")
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
    scanner = _Scanner(_BufferSource(path, buffer))
    scanner.feed(buffer, 0, final=True)
    return scanner.result(path, len(buffer), buffer.endswith(b"\n"))


def read_session_file(path: Path, block_size: int = _BLOCK) -> LoadedFile:
    """Read and index `path` (must exist) in blocks of `block_size` bytes; the bytes are not kept (`_FileSource`).

    Raises `NotARegularFileError` for a directory, FIFO or device (never opened for reading)."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        source = _FileSource(path, fd)
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


# --------------------------------------------------------------------------- migrations


def migrate_bytes(buffer: bytes) -> bytes | None:
    """The file migrated to the current version, or None when it is already current or not a session.

    v1 -> v2: every entry gets a fresh id and `parentId` = the previous entry's id; a compaction's
    `firstKeptEntryIndex` (index among parsed records, header = 0) becomes `firstKeptEntryId`.
    v2 -> v3: message role `hookMessage` -> `custom`. Lines a step does not change keep their exact bytes;
    unparsable lines stay where they were.
    """
    lines: list[tuple[bytes, Any]] = []  # (raw, parsed dict or None); parsed JSON values are untyped here
    for _line_no, start, end, _nl in _lines(buffer):
        raw = buffer[start:end]
        if not raw.strip():
            continue
        try:
            data: Any = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        lines.append((raw, data if isinstance(data, dict) else None))
    parsed = [i for i, (_raw, data) in enumerate(lines) if data is not None]
    if not parsed:
        return None
    header = lines[parsed[0]][1]
    if parse_header(header) is None:
        return None
    version = header.get("version") or 1
    if version >= CURRENT_SESSION_VERSION:
        return None
    changed: set[int] = {parsed[0]}
    if version < 2:
        _migrate_v1(lines, parsed, changed)
    _migrate_v2(lines, parsed, changed)
    header["version"] = CURRENT_SESSION_VERSION
    out = bytearray()
    for i, (raw, data) in enumerate(lines):
        out += dump_dict_line(data) if i in changed else raw + b"\n"
    return bytes(out)


def _migrate_v1(lines: list[tuple[bytes, Any]], parsed: list[int], changed: set[int]) -> None:
    ids: set[str] = set()
    previous: str | None = None
    records = [lines[i][1] for i in parsed]  # index 0 is the header, as v1 indexes count it
    for position, i in enumerate(parsed[1:], start=1):
        old = lines[i][1]
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        rest = {k: v for k, v in old.items() if k not in ("type", "id", "parentId")}
        new = {"type": old.get("type"), "id": entry_id, "parentId": previous, **rest}
        lines[i] = (lines[i][0], new)
        records[position] = new
        changed.add(i)
        previous = entry_id
    for i in parsed[1:]:
        data = lines[i][1]
        if data.get("type") == "compaction" and isinstance(data.get("firstKeptEntryIndex"), int):
            index = data.pop("firstKeptEntryIndex")
            if 0 < index < len(records):
                data["firstKeptEntryId"] = records[index]["id"]


def _migrate_v2(lines: list[tuple[bytes, Any]], parsed: list[int], changed: set[int]) -> None:
    for i in parsed[1:]:
        data = lines[i][1]
        message = data.get("message")
        if data.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
            changed.add(i)


# --------------------------------------------------------------------------- writing


class SessionLock:
    """Advisory single-writer lock: `flock` on the sidecar `<file>.lock`, which holds the writer's pid.

    The sidecar sits beside the real file (symlinks resolved), so every name of one file shares one lock. The kernel
    drops a flock when its process dies, so a crashed (even SIGKILLed) writer never blocks the next one: its
    leftover sidecar is simply locked again. The sidecar is unlinked on release; an acquirer re-checks that the path
    still names the inode it locked, so a release racing with an acquire cannot leave two holders.
    """

    def __init__(self, path: Path, lock_path: Path | None = None, subject: str | None = None) -> None:
        self.path = path
        if lock_path is None:
            real = Path(os.path.realpath(path))
            lock_path = real.with_name(real.name + ".lock")
        self.lock_path = lock_path
        self._subject = subject
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise `SessionLockedError` naming the holder's pid."""
        if self._fd is not None:
            return
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            # Never through a symlink, never blocking (a FIFO planted as the sidecar), only a regular file.
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            fd = os.open(self.lock_path, flags, 0o644)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                os.close(fd)
                raise NotARegularFileError(self.lock_path, _kind(mode))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise SessionLockedError(self.path, pid, self._subject, self.lock_path.name) from None
            try:
                same = os.stat(self.lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            return

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.lock_path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class SessionWriter:
    """The one writer of a session file: holds the lock and an `O_APPEND` descriptor.

    Every `append` is one complete line written with one `write` call (regular files do not split it), so a crash
    leaves at most one torn final line, which the loader skips; a write that fails (disk full, file size limit) is
    cut back off, so the file stays as it was. Only regular files are written: a symlink is followed (the file it
    names is written, the link stays), a directory, FIFO or device is refused and never replaced.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.target = Path(os.path.realpath(path))
        """The file actually written: `path` with symlinks resolved."""
        self.lock = SessionLock(path)
        self._fd: int | None = None

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def create(self, data: bytes) -> None:
        """Create the file exclusively (error if it exists) with `data` as its first lines; a failed write removes
        the file again (it is ours: nothing else existed there)."""
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.lock.acquire()
        try:
            fd = os.open(self.target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except BaseException:
            self.lock.release()
            raise
        try:
            _write_all(fd, data)
        except BaseException:
            os.close(fd)
            self.target.unlink(missing_ok=True)
            self.lock.release()
            raise
        self._fd = fd

    def open_existing(self, expected_size: int) -> None:
        """Become the writer of an existing file that was loaded when it had `expected_size` bytes."""
        self.lock.acquire()
        try:
            fd = open_regular(self.target, os.O_WRONLY | os.O_APPEND)
            size = os.fstat(fd).st_size
            if size != expected_size:
                os.close(fd)
                raise SessionFileError(
                    f"Session file {self.path} changed on disk since it was opened ({expected_size} -> {size} bytes)"
                )
        except BaseException:
            self.lock.release()
            raise
        self._fd = fd
        if size:
            self._terminate_torn_line(size)

    def _terminate_torn_line(self, size: int) -> None:
        # A torn last line (crash mid-write) must not swallow our first new line: end it with its own newline.
        read_fd = open_regular(self.target, os.O_RDONLY)
        try:
            last = os.pread(read_fd, 1, size - 1)
        finally:
            os.close(read_fd)
        if last != b"\n":
            self.append(b"\n")

    def append(self, data: bytes) -> None:
        """Append complete line(s); the caller opened or created the file first. On failure the file is cut back
        to its size before the call, so no partial line is left for the next append to run into."""
        fd = self._fd
        if fd is None:
            raise SessionFileError(f"Session file {self.path} is not open for writing")
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, data)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                logger.warning("could not cut a failed write off %s", self.path)
            raise

    def rewrite(self, data: bytes) -> None:
        """Replace the whole file atomically (temp file beside the real file + `os.replace`) under the lock.

        A symlink keeps pointing at the rewritten file; anything but a regular file (or nothing) is refused."""
        self.lock.acquire()
        check_regular(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        # The old descriptor points at the replaced inode; appends must go to the new file.
        self._fd = open_regular(self.target, os.O_WRONLY | os.O_APPEND)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.lock.release()


__all__ = [
    "LoadedFile",
    "NotARegularFileError",
    "RawLine",
    "PAUSE_AT",
    "Record",
    "SessionFileError",
    "SessionIssue",
    "SessionLock",
    "SessionLockedError",
    "SessionWriteError",
    "SessionWriter",
    "check_regular",
    "file_version",
    "migrate_bytes",
    "open_regular",
    "parse_records",
    "read_header",
    "read_session_file",
    "scan_bytes",
]
