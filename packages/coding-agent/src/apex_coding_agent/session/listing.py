"""Listing sessions for `/resume`, `--continue` and `--session <prefix>`.

Reading for a listing never migrates, locks or writes: a file is only looked at.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from apex_ai.types import AssistantMessage, SystemMessage, TextContent, UserMessage
from apex_coding_agent.paths import default_session_dir, get_sessions_root, is_default_session_dir
from apex_coding_agent.session.entries import MessageEntry, SessionInfoEntry, iso_to_ms
from apex_coding_agent.session.file_errors import SessionFileError
from apex_coding_agent.session.records import parse_records
from apex_coding_agent.session.scanner import read_header, read_session_file

ProgressCallback = Callable[[int, int], None]
"""`on_progress(done, total)` after each file."""

_MAX_PARALLEL = 10


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    all_messages_text: str


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block.text for block in content if isinstance(block, TextContent))
    return ""


def build_session_info(path: Path) -> SessionInfo | None:
    """Info of one file, or None when it is unreadable or not a session."""
    try:
        loaded = read_session_file(path)
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except (OSError, SessionFileError):  # unreadable, or swapped for a FIFO/device since it was listed
        return None
    header = loaded.header
    if header is None:
        return None
    name: str | None = None
    count = 0
    first: str | None = None
    texts: list[str] = []
    newest_ms: int | None = None
    parse_records(record for record in loaded.records if record.type in ("message", "session_info"))
    for record in loaded.records:
        if record.type == "session_info":
            info = record.entry
            if isinstance(info, SessionInfoEntry):
                name = (info.name or "").strip() or None
            continue
        if record.type != "message":
            continue
        entry = record.entry
        if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage):
            continue  # the record of the prompt and tools, not a message of the conversation
        count += 1
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, UserMessage | AssistantMessage):
            text = _text_of(message.content)
            if text:
                texts.append(text)
            if first is None and isinstance(message, UserMessage):
                first = text
            stamp = message.timestamp or iso_to_ms(entry.timestamp)
            newest_ms = stamp if newest_ms is None else max(newest_ms, stamp)
    created = _parse_iso(header.timestamp) or mtime
    modified = datetime.fromtimestamp(newest_ms / 1000, UTC) if newest_ms else created
    return SessionInfo(
        path=path,
        id=header.id,
        cwd=header.cwd or "",
        name=name,
        parent_session_path=header.parent_session,
        created=created,
        modified=modified,
        message_count=count,
        first_message=first or "(no messages)",
        all_messages_text=" ".join(texts),
    )


def _same_cwd(info: SessionInfo, cwd: str | None) -> bool:
    return cwd is None or (bool(info.cwd) and Path(info.cwd).resolve() == Path(cwd).resolve())


def _collect(files: list[Path], on_progress: ProgressCallback | None) -> list[SessionInfo]:
    infos: list[SessionInfo] = []
    with ThreadPoolExecutor(max_workers=_MAX_PARALLEL) as pool:
        for done, info in enumerate(pool.map(build_session_info, files), start=1):
            if info is not None:
                infos.append(info)
            if on_progress is not None:
                on_progress(done, len(files))
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def _jsonl_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        return []


def list_sessions(
    cwd: str, session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
) -> list[SessionInfo]:
    """Sessions of `cwd`, newest `modified` first (a custom dir only yields files whose header cwd is `cwd`)."""
    directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
    infos = _collect(_jsonl_files(directory), on_progress)
    if is_default_session_dir(directory, cwd):
        return infos
    return [i for i in infos if _same_cwd(i, cwd)]


def list_all_sessions(
    session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
) -> list[SessionInfo]:
    """Every session in every subdirectory of the sessions root (or of `session_dir`), newest first."""
    root = Path(session_dir) if session_dir is not None else get_sessions_root()
    files = _jsonl_files(root)
    try:
        subdirs = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        subdirs = []
    for sub in subdirs:
        files.extend(_jsonl_files(sub))
    return _collect(files, on_progress)


def find_most_recent(directory: Path, cwd: str | None) -> Path | None:
    """Newest `*.jsonl` by file mtime whose first record is a header (and, if `cwd` is given, whose cwd matches)."""
    candidates = sorted(_jsonl_files(directory), key=lambda p: _mtime(p), reverse=True)
    for path in candidates:
        header = read_header(path)
        if header is None:
            continue
        if cwd is not None and not (header.cwd and Path(header.cwd).resolve() == Path(cwd).resolve()):
            continue
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
    "find_most_recent",
    "list_all_sessions",
    "list_sessions",
]
