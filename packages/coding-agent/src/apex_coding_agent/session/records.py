"""Records: one indexed line of a session file each, its entry validated only when first needed.

A loaded record keeps its line's byte offsets and reads the line back from its file when the entry is needed: one
`pread` (`Record.entry`) or a few large reads for a whole branch (`parse_records`). Validation goes straight from the
JSON text to the model of the indexed type; a line that path rejects is parsed again the reference way
(`json.loads`, then `parse_entry`), which decides and reports.
"""

from __future__ import annotations

import abc
import json
import logging
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from apex_coding_agent.collector import collector_paused
from apex_coding_agent.session.entries import ENTRY_TYPES, EntryBase, UnknownEntry, parse_entry

logger = logging.getLogger(__name__)

_SPAN = 1 << 22  # at most this many bytes per read when lines are read back in bulk (`parse_records`)
_SPAN_GAP = 1 << 16  # unneeded bytes between two needed lines worth reading through rather than a second read
PAUSE_AT = 2000  # entries parsed in one bulk from which the cyclic collector is paused


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
        source: LineSource | bytes,
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
            if isinstance(self._source, LineSource):
                self._source.report(self.line_no, f"invalid entry: {short_reason(exc)}")
            return UnknownEntry(type=self.type, id=self.id, parent_id=self.parent_id, timestamp=self.timestamp)


class LineSource(abc.ABC):
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


class BufferSource(LineSource):
    """Lines kept in memory (a migrated file's new bytes)."""

    __slots__ = ("_buffer",)

    def __init__(self, path: Path, buffer: bytes) -> None:
        super().__init__(path)
        self._buffer = buffer

    def read(self, start: int, end: int) -> bytes:
        return self._buffer[start:end]


class FileSource(LineSource):
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
    sources: dict[int, FileSource] = {}
    others: list[Record] = []
    count = 0
    for record in records:
        if record._entry is not None:
            continue
        count += 1
        source = record._source
        if isinstance(source, FileSource):
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


def _parse_spans(source: FileSource, group: list[Record], span: int, gap: int) -> None:
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


def short_reason(exc: Exception) -> str:
    """The first line of an error's message (at most 200 characters), for a `file:line: reason` report."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


__all__ = [
    "PAUSE_AT",
    "BufferSource",
    "FileSource",
    "LineSource",
    "Record",
    "SessionIssue",
    "parse_records",
    "short_reason",
]
