"""Listing sessions for `/resume`, `--continue` and `--session <prefix>`.

Listing goes through the session index (`session.index`): the files of the listed directories are checked by
size and mtime, changed ones read again (only their new tail when they grew), and the rows returned. Without a
usable index (turned off, a newer version's, an unwritable agent dir) the files are read directly; both ways read
a file with the same `SummaryReader`, so they list the same sessions. Reading for a listing never migrates, locks
or writes a session file.

The first listing (no index file yet) reads the files directly too, which is quicker than writing every row and
message text while the user waits, and then builds the index on a background thread, so the next listing is
warm. That thread is not a daemon: a short process (`apex-code sessions list`) finishes the build before it
exits. Until it is done, listings of this process read the files as well (`wait_for_index_builds` waits for it).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from apex_coding_agent.collector import collector_paused
from apex_coding_agent.paths import default_session_dir, get_sessions_root, is_default_session_dir
from apex_coding_agent.session.scanner import read_header
from apex_coding_agent.session.summary import ASSISTANT, USER, Summary, read_summary

if TYPE_CHECKING:
    from apex_coding_agent.session.index import ListedRow

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
"""`on_progress(done, total)` after each file read."""

# `directory / name` for thousands of listed names is a measurable part of a warm listing; pathlib's own helper
# for a single already-clean name (what `iterdir` uses, Python <= 3.12) costs a fifth of it.
_make_child = getattr(Path, "_make_child_relpath", None)


def _child(directory: Path, name: str) -> Path:
    if _make_child is not None:
        child: Path = _make_child(directory, name)
        return child
    return directory / name


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One session as listed. `all_messages_text` (every user and assistant text) is read on first access."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    leaf_id: str | None = None
    models: tuple[str, ...] = ()
    cost: float = 0.0
    _text: list[str | Callable[[], str]] = field(default_factory=list, repr=False, compare=False)

    def to_json(self) -> dict[str, object]:
        """The wire shape shared by `sessions list --json`, RPC `list_sessions` and the SDK (no message texts)."""
        return {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "name": self.name,
            "parentSessionPath": self.parent_session_path,
            "created": self.created.isoformat().replace("+00:00", "Z"),
            "modified": self.modified.isoformat().replace("+00:00", "Z"),
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "leafId": self.leaf_id,
            "models": list(self.models),
            "cost": self.cost,
        }

    @property
    def all_messages_text(self) -> str:
        if self._text and not isinstance(self._text[0], str):
            self._text[0] = self._text[0]()
        return str(self._text[0]) if self._text else ""


def session_info(path: Path, summary: Summary, mtime_ns: int, text: str | Callable[[], str]) -> SessionInfo:
    """A `SessionInfo` from a file's summary; `text` is its all-messages text or a function reading it."""
    mtime = datetime.fromtimestamp(mtime_ns / 1e9, UTC)
    created = _parse_iso(summary.created) or mtime
    modified = datetime.fromtimestamp(summary.newest_ms / 1000, UTC) if summary.newest_ms else created
    return SessionInfo(
        path=path,
        id=summary.session_id or "",
        cwd=summary.cwd,
        name=summary.name,
        parent_session_path=summary.parent_session,
        created=created,
        modified=modified,
        message_count=summary.message_count,
        first_message=summary.first_message or "(no messages)",
        leaf_id=summary.leaf_id,
        models=tuple(summary.models),
        cost=summary.cost,
        _text=[text],
    )


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def build_session_info(path: Path) -> SessionInfo | None:
    """Info of one file read directly (no index), or None when it is unreadable or not a session."""
    read = read_summary(path)
    if read is None or not read.summary.is_session:
        return None
    text = " ".join(t.text for t in read.texts if t.kind in (USER, ASSISTANT))
    return session_info(path, read.summary, read.stamp[1], text)


def _cwd_filter(cwd: str) -> Callable[[SessionInfo], bool]:
    """Whether a session's header cwd is `cwd` once both are resolved (each distinct cwd resolved once)."""
    wanted = Path(cwd).resolve()
    resolved: dict[str, bool] = {}

    def same(info: SessionInfo) -> bool:
        if not info.cwd:
            return False
        found = resolved.get(info.cwd)
        if found is None:
            found = resolved[info.cwd] = Path(info.cwd).resolve() == wanted
        return found

    return same


def _jsonl_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        return []


def _scan(directories: list[Path], on_progress: ProgressCallback | None) -> list[SessionInfo]:
    files = [f for d in directories for f in _jsonl_files(d)]
    infos = []
    for done, path in enumerate(files, start=1):
        info = build_session_info(path)
        if info is not None:
            infos.append(info)
        if on_progress is not None:
            on_progress(done, len(files))
    return infos


@dataclass(eq=False)
class _Build:
    """A background build of the index at `location` for the directories (keys) `dirs`."""

    location: Path
    dirs: frozenset[str]
    done: threading.Event = field(default_factory=threading.Event)
    seconds: float = 0.0


_builds_lock = threading.Lock()
_builds: list[_Build] = []


def _running(location: Path) -> list[_Build]:
    return [b for b in _builds if b.location == location and not b.done.is_set()]


def _index_is_cold() -> bool:
    """Whether a look-up should read the files rather than the index: no index file yet, or one this process is
    still building (False too when the index is turned off: the caller finds that out itself)."""
    from apex_coding_agent.session.index_db import index_enabled, index_path

    if not index_enabled():
        return False
    location = index_path()
    with _builds_lock:
        return bool(_running(location)) or not location.exists()


def _claim_build(directories: list[Path]) -> _Build | None | bool:
    """For a first listing: a claimed build of those of `directories` no build of this process covers yet (started
    by `_start_build` once the files are read), None when every one of them is being built already, and False
    when the index is there (or turned off) and the listing goes through it."""
    from apex_coding_agent.session.index import dir_key
    from apex_coding_agent.session.index_db import index_enabled, index_path

    if not index_enabled():
        return False
    location = index_path()
    with _builds_lock:
        running = _running(location)
        if not running and location.exists():
            return False
        covered = {key for build in running for key in build.dirs}
        missing = frozenset(dir_key(d) for d in directories) - covered
        if not missing:
            return None
        build = _Build(location, missing)
        _builds.append(build)
        return build


def _start_build(build: _Build) -> None:
    thread = threading.Thread(target=_build, args=(build,), name="session-index-build", daemon=False)
    try:
        thread.start()
    except BaseException:
        _finish(build)
        raise


def _build(build: _Build) -> None:
    """Index `build.dirs` on this thread's own connection; a failure is only logged (listings read the files)."""
    import sqlite3

    from apex_coding_agent.session.index import IndexUnavailableError, SessionIndex

    started = time.perf_counter()
    try:
        with SessionIndex.open(build.location) as index:
            index.refresh(Path(key) for key in sorted(build.dirs))
    except (IndexUnavailableError, sqlite3.Error, OSError, ValueError) as exc:
        logger.info("session index %s not built: %s", build.location, exc)
    except Exception:  # a cache: nothing it does may surface, but a bug should leave a trace in the log
        logger.exception("session index %s not built", build.location)
    finally:
        build.seconds = time.perf_counter() - started
        _finish(build)


def _finish(build: _Build) -> None:
    with _builds_lock:
        build.done.set()
        _builds.remove(build)


def wait_for_index_builds(timeout: float | None = None) -> bool:
    """Wait until the index builds this process started in the background are done (all of them, or until
    `timeout` seconds passed); returns whether none is left running."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        with _builds_lock:
            pending = list(_builds)
        if not pending:
            return True
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        pending[0].done.wait(left)


def _indexed(directories: list[Path], on_progress: ProgressCallback | None) -> list[SessionInfo] | None:
    """The sessions of `directories` through the index, or None when it cannot be used."""
    import sqlite3  # with the index: never at start-up

    from apex_coding_agent.session.index import IndexUnavailableError, SessionIndex, dir_key

    try:
        index = SessionIndex.open()
    except IndexUnavailableError as exc:
        logger.debug("listing without the session index: %s", exc)
        return None
    try:
        paths = {dir_key(d): d for d in directories}
        infos: list[SessionInfo] = []
        location = index.path
        for key, rows in index.listing(directories, on_progress).items():
            directory = paths[key]
            infos.extend(_listed_info(_child(directory, row[0]), row, location) for row in rows)
        return infos
    except (sqlite3.Error, OSError, ValueError) as exc:
        logger.info("listing without the session index: %s", exc)
        return None
    finally:
        index.close()


def _listed_info(path: Path, row: ListedRow, location: Path) -> SessionInfo:
    """`session_info` of an index row (see `LISTED_FIELDS`), built straight from its columns: thousands of these
    make a warm listing, so no `Summary` in between and no datetime made that is not shown."""
    _, file_id, mtime_ns, sid, cwd, name, parent, created_text, newest_ms, count, first, leaf, models, cost = row[:14]
    created = _parse_iso(created_text) or datetime.fromtimestamp(mtime_ns / 1e9, UTC)
    return SessionInfo(
        path=path,
        id=sid or "",
        cwd=cwd,
        name=name,
        parent_session_path=parent,
        created=created,
        modified=datetime.fromtimestamp(newest_ms / 1000, UTC) if newest_ms else created,
        message_count=count,
        first_message=first or "(no messages)",
        leaf_id=leaf,
        models=tuple(filter(None, models.split("\n"))) if models else (),
        cost=cost,
        _text=[partial(_load_text, location, file_id)],
    )


def _load_text(path: Path, file_id: int) -> str:
    import sqlite3

    from apex_coding_agent.session.index import IndexUnavailableError, SessionIndex

    try:
        with SessionIndex.open(path) as index:
            return index.all_text(file_id)
    except (IndexUnavailableError, sqlite3.Error):
        return ""


def collect(directories: list[Path], on_progress: ProgressCallback | None = None) -> list[SessionInfo]:
    """Every session in `directories` (not their subdirectories), newest `modified` first."""
    claimed = _claim_build(directories)
    try:
        # Thousands of small objects, none of them cyclic garbage: a collection in the middle would only cost time.
        with collector_paused():
            infos = _indexed(directories, on_progress) if claimed is False else None
            if infos is None:
                infos = _scan(directories, on_progress)
            infos.sort(key=lambda i: (i.modified, i.path.name), reverse=True)
    except BaseException:
        if isinstance(claimed, _Build):
            _finish(claimed)  # never started: nobody may wait for it
        raise
    # A first listing's files are read before the index is built, not while it is (the two would only share one
    # core's worth of interpreter), and the build starts once the list is ready.
    if isinstance(claimed, _Build):
        _start_build(claimed)
    return infos


def list_sessions(
    cwd: str, session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
) -> list[SessionInfo]:
    """Sessions of `cwd`, newest `modified` first (a custom dir only yields files whose header cwd is `cwd`)."""
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    infos = collect([directory], on_progress)
    if is_default_session_dir(directory, cwd):
        return infos
    return list(filter(_cwd_filter(cwd), infos))


def session_dirs(session_dir: str | Path | None = None) -> list[Path]:
    """The sessions root (or `session_dir`) and each of its subdirectories: where `list_all_sessions` looks."""
    root = Path(session_dir) if session_dir is not None else get_sessions_root()
    try:
        subdirs = sorted(d for d in root.iterdir() if d.is_dir())
    except OSError:
        subdirs = []
    return [root, *subdirs]


def list_all_sessions(
    session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
) -> list[SessionInfo]:
    """Every session in every subdirectory of the sessions root (or of `session_dir`), newest first."""
    return collect(session_dirs(session_dir), on_progress)


def find_most_recent(directory: Path, cwd: str | None) -> Path | None:
    """Newest `*.jsonl` by file mtime that is a session (and, if `cwd` is given, whose cwd matches)."""
    infos = None if _index_is_cold() else _indexed([directory], None)
    if infos is not None:
        wanted = infos if cwd is None else list(filter(_cwd_filter(cwd), infos))
        return max(wanted, key=lambda i: _mtime(i.path)).path if wanted else None
    # Without the index only headers are read, newest file first, until one fits.
    for path in sorted(_jsonl_files(directory), key=_mtime, reverse=True):
        header = read_header(path)
        if header is not None and (cwd is None or (header.cwd and Path(header.cwd).resolve() == Path(cwd).resolve())):
            return path
    return None


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


__all__ = [
    "ProgressCallback",
    "SessionInfo",
    "build_session_info",
    "collect",
    "find_most_recent",
    "list_all_sessions",
    "list_sessions",
    "session_dirs",
    "session_info",
    "wait_for_index_builds",
]
