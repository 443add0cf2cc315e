"""The session index: a SQLite cache of every session file's listing fields and message texts.

The JSONL files stay the truth; the index (`session-index.sqlite` beside the sessions root) is derived from them
and may be deleted at any time. A file is keyed by its directory and name and remembered with its size, mtime and
inode: a file whose size or mtime changed is read again, from where the last read stopped when it only grew (the
bytes before that point still match) and from the start otherwise; rows of files that are gone are dropped. A
missing, corrupt or older-schema index is rebuilt without a word (a log line at most); one of a newer schema belongs
to a newer version of the program and is left alone (listing then scans the files).

Many processes use one index at once. It runs in WAL mode (readers never wait for a writer and see only committed
transactions), every write is a short `BEGIN IMMEDIATE` transaction under a busy timeout, and an update commits only
if the file's row is still the one its read started from (compare-and-set), so two processes refreshing one file
never both add its new lines. A reader refreshes the directories it lists before it queries them, so it never sees
a directory half indexed by someone else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apex_coding_agent.session.index_db import (
    INDEX_ENV,
    INDEX_FILE_NAME,
    NOT_DAMAGE,
    SCHEMA_VERSION,
    IndexUnavailableError,
    connect,
    index_enabled,
    index_path,
    remove_database,
)
from apex_coding_agent.session.summary import FileRead, Resume, Summary, read_summary

logger = logging.getLogger(__name__)

_COMMIT_BYTES = 16 << 20  # bytes read between commits while many files are (re)indexed: short transactions
_COMMIT_FILES = 1000
_FTS_CHUNK = 20_000  # texts moved into the full-text index per transaction

ProgressCallback = Callable[[int, int], None]
# `files.state`: what the file held when last read.
_PENDING, _SESSION, _FOREIGN = 0, 1, 2  # no header yet / a session / not a session

ROW_FIELDS = (
    "id, dir, name, size, mtime_ns, inode, read_to, fingerprint, state, session_id, cwd, session_name, "
    "parent_session, created, newest_ms, message_count, first_message, leaf_id, models, cost"
)
# What a listing reads of each row: the listing fields first (the shape of `ListedRow`), then the stamp it compares
# with the file on disk and the state. Neither the read position nor the fingerprint: a warm listing needs neither.
LISTED_FIELDS = (
    "name, id, mtime_ns, session_id, cwd, session_name, parent_session, created, newest_ms, message_count, "
    "first_message, leaf_id, models, cost, size, inode, state"
)
ListedRow = tuple[Any, ...]
"""A session's row as a listing gets it: the columns of `LISTED_FIELDS`, as SQLite returns them (`models` is
newline-joined). A plain tuple: building an object per row is most of a warm listing's time otherwise."""


@dataclass(frozen=True, slots=True)
class IndexedFile:
    """One file's row: where it is, what was read of it, and its listing fields."""

    id: int
    dir: str
    name: str
    size: int
    mtime_ns: int
    inode: int
    read_to: int
    fingerprint: bytes
    state: int
    summary: Summary

    @property
    def stamp(self) -> tuple[int, int, int]:
        return (self.size, self.mtime_ns, self.inode)

    def listed(self) -> ListedRow:
        """This row in the shape of `LISTED_FIELDS`."""
        s = self.summary
        return (self.name, self.id, self.mtime_ns, s.session_id, s.cwd, s.name, s.parent_session, s.created,
                s.newest_ms, s.message_count, s.first_message, s.leaf_id, "\n".join(s.models), s.cost, self.size,
                self.inode, self.state)  # fmt: skip

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> IndexedFile:
        """From the columns of `ROW_FIELDS` (Any: SQLite values, typed by the schema)."""
        rowid, dir_, name, size, mtime, inode, read_to, fingerprint, state, *fields = row
        sid, cwd, sname, parent, created, newest, count, first, leaf, models, cost = fields
        summary = Summary(
            session_id=sid,
            cwd=cwd,
            parent_session=parent,
            created=created,
            name=sname,
            message_count=count,
            first_message=first,
            newest_ms=newest,
            leaf_id=leaf,
            models=[m for m in str(models).split("\n") if m],
            cost=cost,
        )
        return cls(rowid, dir_, name, size, mtime, inode, read_to, fingerprint, state, summary)


@dataclass(slots=True)
class RefreshStats:
    """What a refresh did: files (re)read from the start or from their tail, rows dropped, bytes read."""

    full: int = 0
    tail: int = 0
    dropped: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    dirs: list[str] = field(default_factory=list)


def dir_key(directory: str | os.PathLike[str]) -> str:
    """The key a directory's files are indexed under: its real absolute path."""
    return os.path.realpath(directory)


def _stat_dir(directory: Path) -> dict[str, tuple[int, int, int]]:
    """`*.jsonl` regular files (symlinks followed) of `directory` -> (size, mtime_ns, inode); {} when unreadable."""
    found: dict[str, tuple[int, int, int]] = {}
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    if entry.is_file():
                        st = entry.stat()
                        found[entry.name] = (st.st_size, st.st_mtime_ns, st.st_ino)
                except OSError:
                    continue
    except OSError:
        return {}
    return found


class SessionIndex:
    """A connection to the index. Open with `SessionIndex.open()`; close (or use as a context manager) after use."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self.tool_output = self._meta("tool_output") == "1"

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path | None = None) -> SessionIndex:
        """Open (creating, upgrading or replacing a corrupt one as needed) the index at `path` (default:
        `index_path()`). Raises `IndexUnavailableError` when it cannot be used."""
        if path is None:
            if not index_enabled():
                raise IndexUnavailableError(f"the session index is turned off ({INDEX_ENV})")
            path = index_path()
        try:
            return cls(connect(path), path)
        except OSError as exc:  # the agent dir cannot be made (read-only home, a file in the way)
            raise IndexUnavailableError(f"{path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and any(w in str(exc) for w in NOT_DAMAGE):
                raise IndexUnavailableError(f"{path}: {exc}") from exc
            logger.info("session index %s is unreadable (%s): rebuilding it", path, exc)
        remove_database(path)
        try:
            return cls(connect(path), path)
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailableError(f"{path}: {exc}") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction (taken at once, so it never fails half-way on a lock upgrade)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # ------------------------------------------------------------------ refresh

    def refresh(self, directories: Iterable[Path], on_progress: ProgressCallback | None = None) -> RefreshStats:
        """Bring the rows of every `*.jsonl` file in `directories` up to date with the files."""
        return self._sync(directories, on_progress)

    def listing(
        self, directories: Iterable[Path], on_progress: ProgressCallback | None = None
    ) -> dict[str, list[ListedRow]]:
        """Refresh `directories`, then their sessions' rows (`ListedRow`, in no particular order) by directory key.

        One scan of each directory and one query of its rows: the rows whose file still has their size, mtime and
        inode are returned as read; the files that changed (or are new) are read, written and returned as written."""
        started = time.perf_counter()
        stats = RefreshStats()
        listed: dict[str, list[ListedRow]] = {}
        work: list[tuple[Path, str, IndexedFile | None]] = []
        for directory in directories:
            key = dir_key(directory)
            stats.dirs.append(key)
            on_disk = _stat_dir(directory)
            out = listed.setdefault(key, [])
            ids: dict[str, int] = {}
            unchanged: set[str] = set()
            for row in self._conn.execute(f"SELECT {LISTED_FIELDS} FROM files WHERE dir = ?", (key,)):
                name = row[0]
                ids[name] = row[1]
                if on_disk.get(name) == (row[14], row[2], row[15]):
                    unchanged.add(name)
                    if row[16] == _SESSION:
                        out.append(row)
            self._drop([file_id for name, file_id in ids.items() if name not in on_disk], stats)
            changed = [name for name in on_disk if name not in unchanged]
            stale = [name for name in changed if name in ids]  # new files have no row to read
            rows = self._rows(key, stale) if stale else {}
            work.extend((directory / name, key, rows.get(name)) for name in changed)
        written = self._apply_all(work, stats, on_progress)
        fresh = list(written.values())
        # The rows just written are known as written; only those another process wrote are read back.
        by_dir: dict[str, list[str]] = {}
        for path, key, _ in work:
            if (key, path.name) not in written:
                by_dir.setdefault(key, []).append(path.name)
        for key, names in by_dir.items():
            fresh.extend(self._rows(key, names).values())
        for found in fresh:
            if found.state == _SESSION:
                listed[found.dir].append(found.listed())
        stats.seconds = time.perf_counter() - started
        return listed

    def _sync(self, directories: Iterable[Path], on_progress: ProgressCallback | None) -> RefreshStats:
        started = time.perf_counter()
        stats = RefreshStats()
        work: list[tuple[Path, str, IndexedFile | None]] = []
        for directory in directories:
            key = dir_key(directory)
            stats.dirs.append(key)
            on_disk = _stat_dir(directory)
            known = dict(self._stamps(key))
            self._drop([stamp[0] for name, stamp in known.items() if name not in on_disk], stats)
            changed = [name for name, stamp in on_disk.items() if known.get(name, (0, None))[1:] != stamp]
            stale = [name for name in changed if name in known]  # new files have no row to read
            rows = self._rows(key, stale) if stale else {}
            work.extend((directory / name, key, rows.get(name)) for name in changed)
        self._apply_all(work, stats, on_progress)
        stats.seconds = time.perf_counter() - started
        return stats

    def _drop(self, gone: list[int], stats: RefreshStats) -> None:
        """Forget the rows (and texts) of files that are gone."""
        if not gone:
            return
        with self._write() as conn:
            for file_id in gone:
                _delete_texts(conn, file_id)
            conn.executemany("DELETE FROM files WHERE id = ?", [(i,) for i in gone])
        stats.dropped += len(gone)

    def refresh_file(self, path: Path) -> None:
        """Bring one file's row up to date (what a writer calls after appending to it)."""
        key = dir_key(path.parent)
        self._apply_all([(path, key, self._rows(key, [path.name]).get(path.name))], RefreshStats(), None)

    def _apply_all(
        self,
        work: list[tuple[Path, str, IndexedFile | None]],
        stats: RefreshStats,
        on_progress: ProgressCallback | None,
    ) -> dict[tuple[str, str], IndexedFile]:
        """Read and write each file of `work`; returns the rows this call wrote, by (dir key, name)."""
        written: dict[tuple[str, str], IndexedFile] = {}
        pending: list[tuple[Path, str, IndexedFile | None, FileRead]] = []
        pending_bytes = 0
        for done, (path, key, row) in enumerate(work, start=1):
            read = _read(path, row, self.tool_output)
            if read is not None:
                pending.append((path, key, row, read))
                pending_bytes += read.bytes_read
                stats.bytes_read += read.bytes_read
                if read.from_start:
                    stats.full += 1
                else:
                    stats.tail += 1
            if pending_bytes >= _COMMIT_BYTES or len(pending) >= _COMMIT_FILES:
                self._commit(pending, written)
                pending, pending_bytes = [], 0
            if on_progress is not None:
                on_progress(done, len(work))
        if pending:
            self._commit(pending, written)
        return written

    def _commit(
        self,
        pending: list[tuple[Path, str, IndexedFile | None, FileRead]],
        written: dict[tuple[str, str], IndexedFile],
    ) -> None:
        stale: list[tuple[Path, str]] = []
        texts: list[tuple[int, str, str, str]] = []
        rows: list[tuple[str, str, int, FileRead]] = []
        with self._write() as conn:
            new = [(path, key, read) for path, key, row, read in pending if row is None]
            ids = _insert_new(conn, new) if len(new) > 1 else [None] * len(new)
            pending_ids = iter(ids)
            for path, key, row, read in pending:
                file_id = next(pending_ids) if row is None else None
                if file_id is None:
                    file_id = _apply(conn, key, path.name, row, read)
                if file_id is None:
                    stale.append((path, key))
                else:
                    rows.append((key, path.name, file_id, read))
                    texts.extend((file_id, t.entry_id, t.kind, t.text) for t in read.texts)
            conn.executemany("INSERT INTO texts(file, entry_id, kind, text) VALUES (?, ?, ?, ?)", texts)
        for key, name, file_id, read in rows:
            written[key, name] = IndexedFile(
                file_id, key, name, *read.stamp, read.read_to, read.fingerprint, _state(read), read.summary
            )
        for path, key in stale:
            # Another process updated the row between our read and our commit: read again from its row.
            for _ in range(3):
                fresh = self._rows(key, [path.name]).get(path.name)
                again = _read(path, fresh, self.tool_output)
                if again is None or (fresh is not None and fresh.stamp == again.stamp):
                    break
                with self._write() as conn:
                    file_id = _apply(conn, key, path.name, fresh, again)
                    if file_id is not None:
                        conn.executemany(
                            "INSERT INTO texts(file, entry_id, kind, text) VALUES (?, ?, ?, ?)",
                            [(file_id, t.entry_id, t.kind, t.text) for t in again.texts],
                        )
                        break

    # ------------------------------------------------------------------ queries

    def _stamps(self, key: str) -> Iterator[tuple[str, tuple[int, int, int, int]]]:
        """(name, (id, size, mtime_ns, inode)) of every row of directory `key`: what a refresh compares."""
        for name, rowid, size, mtime, inode in self._conn.execute(
            "SELECT name, id, size, mtime_ns, inode FROM files WHERE dir = ?", (key,)
        ):
            yield name, (rowid, size, mtime, inode)

    def _rows(self, key: str, names: list[str]) -> dict[str, IndexedFile]:
        rows: dict[str, IndexedFile] = {}
        for start in range(0, len(names), 500):  # SQLite caps the parameters of one statement
            part = names[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._conn.execute(
                f"SELECT {ROW_FIELDS} FROM files WHERE dir = ? AND name IN ({marks})", (key, *part)
            ):
                found = IndexedFile.from_row(row)
                rows[found.name] = found
        return rows

    def _files_in(self, keys: list[str]) -> list[IndexedFile]:
        marks = ",".join("?" * len(keys))
        rows = self._conn.execute(f"SELECT {ROW_FIELDS} FROM files WHERE dir IN ({marks})", keys).fetchall()
        return [IndexedFile.from_row(r) for r in rows]

    def sessions(self, directories: Iterable[Path]) -> list[IndexedFile]:
        """The indexed sessions of `directories` (refresh first), in no particular order."""
        keys = [dir_key(d) for d in directories]
        return [f for f in self._files_in(keys) if f.state == _SESSION] if keys else []

    def known_dirs(self) -> list[str]:
        return [str(r[0]) for r in self._conn.execute("SELECT DISTINCT dir FROM files")]

    def all_text(self, file_id: int) -> str:
        """User and assistant texts of a session, in file order, joined by spaces (`SessionInfo.all_messages_text`)."""
        rows = self._conn.execute(
            "SELECT text FROM texts WHERE file = ? AND kind IN ('user', 'assistant') ORDER BY id", (file_id,)
        )
        return " ".join(str(r[0]) for r in rows)

    def catch_up(self) -> int:
        """Move texts not yet in the full-text index into it (what a search needs first); returns how many.

        Done in chunks of short transactions; a reader sees the full-text index only as of a committed chunk."""
        moved = 0
        while True:
            with self._write() as conn:
                upto = int(conn.execute("SELECT value FROM meta WHERE key = 'fts_upto'").fetchone()[0])
                top = conn.execute(
                    "SELECT max(id) FROM (SELECT id FROM texts WHERE id > ? ORDER BY id LIMIT ?)", (upto, _FTS_CHUNK)
                ).fetchone()[0]
                if top is None:
                    return moved
                conn.execute(
                    "INSERT INTO texts_fts(rowid, text) SELECT id, text FROM texts WHERE id > ? AND id <= ?",
                    (upto, top),
                )
                moved += conn.execute("SELECT changes()").fetchone()[0]
                conn.execute("UPDATE meta SET value = ? WHERE key = 'fts_upto'", (str(top),))

    def execute(self, sql: str, params: tuple[object, ...] | list[object] = ()) -> sqlite3.Cursor:
        """A read query on the index (searches live in `session.search`)."""
        return self._conn.execute(sql, params)

    def create_function(self, name: str, arity: int, function: Callable[..., int | float | str | None]) -> None:
        """Register a SQL function on this connection (for filters SQLite cannot express, such as resolved paths)."""
        self._conn.create_function(name, arity, function, deterministic=True)

    def size_bytes(self) -> int:
        """Bytes of the index on disk (database and write-ahead log)."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.stat(f"{self.path}{suffix}").st_size
        return total

    # ------------------------------------------------------------------ rebuild

    def reindex(
        self,
        directories: Iterable[Path],
        tool_output: bool | None = None,
        on_progress: ProgressCallback | None = None,
        *,
        setting: bool | None = None,
    ) -> RefreshStats:
        """Forget every row and read `directories` (plus every directory indexed before) from scratch.

        `tool_output` switches the indexing of tool results (kept in the index for later refreshes). `setting` is the
        `sessionIndex.includeToolOutput` setting the caller read, remembered for `follow_setting`."""
        dirs = {dir_key(d): Path(d) for d in directories}
        for key in self.known_dirs():
            dirs.setdefault(key, Path(key))
        with self._write() as conn:
            conn.execute("DELETE FROM texts")
            conn.execute("DELETE FROM files")
            conn.execute("INSERT INTO texts_fts(texts_fts) VALUES ('delete-all')")
            conn.execute(
                "UPDATE meta SET value = (SELECT COALESCE(max(seq), 0) FROM sqlite_sequence) WHERE key = 'fts_upto'"
            )
            if tool_output is not None:
                _set_meta(conn, "tool_output", tool_output)
            if setting is not None:
                _set_meta(conn, "tool_output_setting", setting)
        if tool_output is not None:
            self.tool_output = tool_output
        stats = self.refresh(dirs.values(), on_progress)
        self.catch_up()
        with contextlib.suppress(sqlite3.OperationalError):  # busy readers: the space is reclaimed next time
            self._conn.execute("INSERT INTO texts_fts(texts_fts) VALUES ('optimize')")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return stats

    def follow_setting(self, include_tool_output: bool, directories: Iterable[Path]) -> bool:
        """Re-index (with tool output or without, as `include_tool_output` says) when the setting changed since the
        index last saw it; returns whether it did. The index's own mode may differ from an unchanged setting: that is
        `sessions reindex --tool-output` overriding it, and it stays until the setting changes."""
        seen = self._meta("tool_output_setting")
        if seen == ("1" if include_tool_output else "0"):
            return False
        # Never seen: a mode chosen by an explicit reindex stands; an index that never had one follows the setting.
        if seen is None and (self.tool_output == include_tool_output or self._meta("tool_output") is not None):
            with self._write() as conn:
                _set_meta(conn, "tool_output_setting", include_tool_output)
            return False
        logger.info("session index: tool output %s by setting, re-indexing", "on" if include_tool_output else "off")
        self.reindex(directories, tool_output=include_tool_output, setting=include_tool_output)
        return True


def _set_meta(conn: sqlite3.Connection, key: str, flag: bool) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, "1" if flag else "0"))


def _read(path: Path, row: IndexedFile | None, tool_output: bool) -> FileRead | None:
    """What changed in `path` since `row` was read: its tail when it only grew, else all of it."""
    resume = None
    if row is not None and row.state != _FOREIGN:
        resume = Resume(row.read_to, row.fingerprint, row.inode, row.summary)
    return read_summary(path, resume, tool_output=tool_output)


def _state(read: FileRead) -> int:
    return _FOREIGN if read.not_a_session else (_SESSION if read.summary.is_session else _PENDING)


def _delete_texts(conn: sqlite3.Connection, file_id: int) -> None:
    """Drop a file's texts, from the full-text index too where they reached it (it needs the text to forget it)."""
    conn.execute(
        "INSERT INTO texts_fts(texts_fts, rowid, text) SELECT 'delete', id, text FROM texts WHERE file = ? AND id <= "
        "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_upto')",
        (file_id,),
    )
    conn.execute("DELETE FROM texts WHERE file = ?", (file_id,))


_COLUMNS = (
    "size, mtime_ns, inode, read_to, fingerprint, state, session_id, cwd, session_name, parent_session, created, "
    "newest_ms, message_count, first_message, leaf_id, models, cost"
)
_INSERT = f"INSERT OR IGNORE INTO files(dir, name, {_COLUMNS}) VALUES ({','.join('?' * 19)})"
_UPDATE = (
    f"UPDATE files SET {', '.join(f'{c.strip()} = ?' for c in _COLUMNS.split(','))} "
    "WHERE id = ? AND size = ? AND mtime_ns = ? AND inode = ? AND read_to = ?"
)


_INSERT_WITH_ID = f"INSERT OR IGNORE INTO files(id, dir, name, {_COLUMNS}) VALUES ({','.join('?' * 20)})"


def _values(read: FileRead) -> tuple[Any, ...]:
    """The `_COLUMNS` of a file's row after `read`."""
    s = read.summary
    return (*read.stamp, read.read_to, read.fingerprint, _state(read), s.session_id, s.cwd, s.name, s.parent_session,
            s.created, s.newest_ms, s.message_count, s.first_message, s.leaf_id, "\n".join(s.models), s.cost)  # fmt: skip


def _insert_new(conn: sqlite3.Connection, new: list[tuple[Path, str, FileRead]]) -> list[int | None]:
    """Rows of files that had none, in one statement (a first listing writes thousands): the ids are chosen here,
    after the highest in use, inside the caller's write transaction, so the statement's rows come in order. Per file
    its id, or None where another process inserted a row for it first (the caller then goes the slow way)."""
    first = conn.execute("SELECT COALESCE(max(id), 0) + 1 FROM files").fetchone()[0]
    before = conn.total_changes
    conn.executemany(
        _INSERT_WITH_ID, [(first + n, key, path.name, *_values(read)) for n, (path, key, read) in enumerate(new)]
    )
    if conn.total_changes - before == len(new):
        return [first + n for n in range(len(new))]
    # Some rows were there already (ignored): every id from `first` on in the table is one of this statement's.
    present = {int(r[0]) for r in conn.execute("SELECT id FROM files WHERE id >= ?", (first,))}
    return [first + n if first + n in present else None for n in range(len(new))]


def _apply(conn: sqlite3.Connection, key: str, name: str, row: IndexedFile | None, read: FileRead) -> int | None:
    """Write the row of `read` if the file's row is still `row` (compare-and-set, in the statement itself) and
    return its id (the caller adds the texts); None when someone else inserted or changed it meanwhile."""
    values = _values(read)
    if row is None:
        cursor = conn.execute(_INSERT, (key, name, *values))
        if cursor.rowcount != 1 or cursor.lastrowid is None:
            return None
        return cursor.lastrowid
    cursor = conn.execute(_UPDATE, (*values, row.id, row.size, row.mtime_ns, row.inode, row.read_to))
    if cursor.rowcount != 1:
        return None
    if read.from_start:
        _delete_texts(conn, row.id)
    return row.id


def update_index_for(path: Path) -> None:
    """Refresh `path`'s row in the default index if that index exists (a writer never creates it: the first
    listing does). Never raises: the index is a cache, and a reader catches up from the file's size anyway."""
    if not index_enabled():
        return
    location = index_path()
    if not location.exists():
        return
    try:
        with SessionIndex.open(location) as index:
            index.refresh_file(path)
    except Exception as exc:  # a cache must never fail the append that called it, whatever went wrong
        logger.debug("session index not updated for %s: %s", path, exc)


__all__ = [
    "INDEX_ENV",
    "INDEX_FILE_NAME",
    "SCHEMA_VERSION",
    "IndexUnavailableError",
    "ROW_FIELDS",
    "IndexedFile",
    "LISTED_FIELDS",
    "ListedRow",
    "RefreshStats",
    "SessionIndex",
    "dir_key",
    "index_enabled",
    "index_path",
    "update_index_for",
]
