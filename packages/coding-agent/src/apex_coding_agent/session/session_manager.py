"""The session tree: appends, branching, labels, names, context and session files.

A `SessionManager` owns one session at a time. Persisted sessions defer creating their file until the first
assistant message; after that, and for sessions opened from an existing file, every append is written at
once as one line. Only this manager's process may append: it takes the file's advisory lock on its first write,
or at once with `lock_for_writing()` (what a run does, so a second writer is refused at start, not mid-run). A
write that fails raises `SessionWriteError`; the entry is then neither on disk nor in the tree.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict

from apex_agent.messages import AgentMessage, dump_message
from apex_ai.types import AssistantMessage, Usage, UserContent
from apex_coding_agent.paths import default_session_dir, is_default_session_dir
from apex_coding_agent.session.branch_view import BranchView
from apex_coding_agent.session.context import SessionContext, StoredSettings, build_context, stored_settings
from apex_coding_agent.session.entries import (
    CURRENT_SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    EntryBase,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    dump_dict_line,
    dump_line,
    iso_now,
    new_entry_id,
)
from apex_coding_agent.session.file_errors import SessionFileError, SessionWriteError, check_regular
from apex_coding_agent.session.ids import SESSION_ID_ERROR, new_header, session_file_name, uuid7, validate_session_id
from apex_coding_agent.session.listing import (
    ProgressCallback,
    SessionInfo,
    find_most_recent,
    list_all_sessions,
    list_sessions,
)
from apex_coding_agent.session.migrations import migrate_bytes
from apex_coding_agent.session.records import Record, SessionIssue, parse_records
from apex_coding_agent.session.scanner import LoadedFile, file_version, read_session_file
from apex_coding_agent.session.tree import TreeNode, build_tree, first_user_text
from apex_coding_agent.session.writer import SessionLock, SessionWriter

_NEWLINES = re.compile(r"[\r\n]+")


class _EntryHeader(TypedDict):
    """The `EntryBase` fields of an entry about to be appended (see `SessionManager._next_header`)."""

    id: str
    parent_id: str | None
    timestamp: str


class SessionManager:
    """One session's tree and (optionally) its file. Use the class methods to make one."""

    def __init__(
        self,
        cwd: str,
        session_dir: Path | None,
        header: SessionHeader,
        session_file: Path | None,
        loaded: LoadedFile | None = None,
    ) -> None:
        self.cwd = cwd
        self.session_dir = session_dir
        self._reset(header, session_file, loaded)

    def _reset(
        self, header: SessionHeader, session_file: Path | None, loaded: LoadedFile | None, explicit_id: bool = False
    ) -> None:
        self._session_file = session_file
        self._header = header
        self._writer: SessionWriter | None = SessionWriter(session_file) if session_file is not None else None
        # A caller-chosen id may be chosen again by another run before either has a file: the id itself is locked
        # (`<id>.id.lock` in the session dir) from `lock_for_writing` or file creation until `close`.
        self._id_lock: SessionLock | None = None
        if explicit_id and session_file is not None and loaded is None:
            self._id_lock = SessionLock(
                session_file,
                lock_path=session_file.parent / f"{header.id}.id.lock",
                subject=f"Session id {header.id}",
            )
        self._on_disk = loaded is not None
        self._unindexed = 0  # lines appended since the session index last heard of this file
        self._disk_size = loaded.size if loaded is not None else 0
        self.issues: list[SessionIssue] = loaded.issues if loaded is not None else []
        self._records: list[Record] = []
        self._by_id: dict[str, Record] = {}
        self._labels: dict[str, tuple[str, str]] = {}
        self._name: str | None = None
        self._has_assistant = False
        self._leaf_id: str | None = None
        for record in loaded.records if loaded is not None else []:
            self._index(record)

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(cls, cwd: str, session_dir: str | Path | None = None, id: str | None = None) -> SessionManager:
        """A new persisted session in `session_dir` (default: the per-cwd dir); its file appears with the first
        assistant message."""
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        header = new_header(cwd, id)
        manager = cls(cwd, directory, header, directory / session_file_name(header))
        if id is not None:
            manager._reset(header, manager._session_file, None, explicit_id=True)
        return manager

    @classmethod
    def in_memory(cls, cwd: str | None = None, id: str | None = None) -> SessionManager:
        """A session that never touches disk (`session_file` is None)."""
        resolved = cwd if cwd is not None else os.getcwd()
        return cls(resolved, None, new_header(resolved, id), None)

    @classmethod
    def open(
        cls, path: str | Path, session_dir: str | Path | None = None, cwd_override: str | None = None
    ) -> SessionManager:
        """Open (and migrate if old) a session file; a missing path becomes a new session written exactly there.

        Raises SessionFileError for a non-empty file that is not a session, and its `NotARegularFileError` for a
        directory, FIFO or device (neither is read or touched). A symlink is followed: the file it names is read
        and written, the link stays.
        """
        file = Path(path).absolute()
        directory = Path(session_dir) if session_dir is not None else file.parent
        if not check_regular(file):
            cwd = cwd_override or os.getcwd()
            return cls(cwd, directory, new_header(cwd, None), file)
        loaded = read_session_file(file)
        if loaded.size == 0:
            cwd = cwd_override or os.getcwd()
            header = new_header(cwd, None)
            manager = cls(cwd, directory, header, file)
            manager._rewrite(dump_line(header))
            return manager
        if loaded.header is None:
            raise SessionFileError(f"Session file is not a valid pi session: {file}")
        if file_version(loaded) < CURRENT_SESSION_VERSION:
            migrated = migrate_bytes(file.read_bytes())
            if migrated is not None:
                writer = SessionWriter(file)
                try:
                    writer.rewrite(migrated)
                finally:
                    writer.close()
                del migrated  # the rewritten file is indexed like any other; its bytes need not stay in memory
                loaded = read_session_file(file)
        assert loaded.header is not None
        cwd = loaded.header.cwd or cwd_override or os.getcwd()
        return cls(cwd, directory, loaded.header, file, loaded)

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | Path | None = None) -> SessionManager:
        """The newest session (by file mtime) of this cwd, else a new one."""
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        recent = find_most_recent(directory, None if is_default_session_dir(directory, cwd) else cwd)
        if recent is None:
            return cls.create(cwd, directory)
        return cls.open(recent, directory)

    @classmethod
    def fork_from(
        cls, source: str | Path, target_cwd: str, session_dir: str | Path | None = None, id: str | None = None
    ) -> SessionManager:
        """Copy every entry of `source` verbatim into a new file for `target_cwd` (`parentSession` = source)."""
        source_path = Path(source).absolute()
        loaded = read_session_file(source_path) if source_path.is_file() else None
        if loaded is None or loaded.header is None or not loaded.records:
            raise SessionFileError(f"Cannot fork: source session file is empty or invalid: {source_path}")
        directory = Path(session_dir) if session_dir is not None else default_session_dir(target_cwd)
        header = new_header(target_cwd, id, parent_session=str(source_path))
        target = directory / session_file_name(header)
        data = dump_line(header) + b"".join(record.raw + b"\n" for record in loaded.records)
        writer = SessionWriter(target)
        try:
            writer.create(data)
        finally:
            writer.close()
        return cls.open(target, directory)

    @staticmethod
    def list_sessions(
        cwd: str, session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
    ) -> list[SessionInfo]:
        """Spec `SessionManager.list`: sessions of `cwd`, newest first."""
        return list_sessions(cwd, session_dir, on_progress)

    @staticmethod
    def list_all(
        session_dir: str | Path | None = None, on_progress: ProgressCallback | None = None
    ) -> list[SessionInfo]:
        """Every session under the sessions root (or `session_dir`), newest first."""
        return list_all_sessions(session_dir, on_progress)

    # ------------------------------------------------------------------ properties

    @property
    def session_file(self) -> Path | None:
        return self._session_file

    @property
    def session_id(self) -> str:
        return self._header.id

    @property
    def is_persisted(self) -> bool:
        return self._session_file is not None

    @property
    def is_written(self) -> bool:
        """True once the file exists on disk (deferred creation has happened, or the file was opened)."""
        return self._on_disk

    def get_header(self) -> SessionHeader:
        return self._header

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> EntryBase | None:
        record = self._by_id.get(self._leaf_id) if self._leaf_id is not None else None
        return record.entry if record is not None else None

    def get_entry(self, entry_id: str) -> EntryBase | None:
        record = self._by_id.get(entry_id)
        return record.entry if record is not None else None

    def get_entries(self) -> list[EntryBase]:
        """All entries in append order (no header); parses every entry."""
        parse_records(self._records)
        return [record.entry for record in self._records]

    def iter_records(self) -> Iterator[Record]:
        """Indexed records in append order (type/id/parentId/timestamp without parsing)."""
        return iter(self._records)

    def get_label(self, entry_id: str) -> str | None:
        found = self._labels.get(entry_id)
        return found[0] if found is not None else None

    def get_session_name(self) -> str | None:
        return self._name

    # ------------------------------------------------------------------ tree

    def get_branch(self, from_id: str | None = None) -> list[EntryBase]:
        """Entries root -> `from_id` (default: the leaf); parses every entry of the branch (see `get_branch_view`)."""
        path = self._path(self._leaf_id if from_id is None else from_id)
        parse_records(path)
        return [record.entry for record in path]

    def get_branch_records(self, from_id: str | None = None) -> list[Record]:
        """The indexed records root -> `from_id` (default: the leaf), without parsing any entry.

        Each record has `type`, `id`, `parent_id`, `timestamp` and `line_no` at once and `entry` on demand.
        """
        return self._path(self._leaf_id if from_id is None else from_id)

    def get_branch_view(self, from_id: str | None = None) -> BranchView:
        """The branch root -> `from_id` (default: the leaf) as a lazy `Sequence[EntryBase]`: entries are parsed
        when read, so a caller that reads the tail (compaction) does not pay for the whole branch."""
        return BranchView(self._path(self._leaf_id if from_id is None else from_id))

    def get_children(self, entry_id: str) -> list[EntryBase]:
        children = [r for r in self._records if r.parent_id == entry_id and r.id != entry_id]
        children.sort(key=lambda r: r.timestamp)
        return [r.entry for r in children]

    def get_tree(self) -> list[TreeNode]:
        """Roots (null parent, self parent or orphan) with children in timestamp order; iterative, any depth."""
        return build_tree(self._records, self._labels)

    def branch(self, entry_id: str) -> None:
        """Move the leaf to `entry_id`; the next append starts a new branch there."""
        if entry_id not in self._by_id:
            raise KeyError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Leaf := None; the next append is a new root."""
        self._leaf_id = None

    def build_session_context(self) -> SessionContext:
        """Messages, thinking level and model of the active branch."""
        return build_context(self._path(self._leaf_id))

    def get_stored_model_and_thinking(self) -> StoredSettings:
        """Model and thinking level of the active branch, exactly as `build_session_context` reports them, without
        projecting any message: only the setting entries met by a backward scan from the leaf are parsed."""
        return stored_settings(self._path(self._leaf_id))

    def _path(self, leaf_id: str | None) -> list[Record]:
        if leaf_id is None:
            return []
        record = self._by_id.get(leaf_id)
        if record is None:
            record = self._records[-1] if self._records else None
        path: list[Record] = []
        seen: set[str] = set()
        while record is not None and record.id not in seen:
            seen.add(record.id)
            path.append(record)
            parent = record.parent_id
            record = self._by_id.get(parent) if parent is not None and parent != record.id else None
        path.reverse()
        return path

    # ------------------------------------------------------------------ appends

    def append_message(self, message: AgentMessage) -> str:
        """Append a `message` entry (never a pending assistant, never a summary role). Returns its id."""
        role = getattr(message, "role", None)
        if role in ("compactionSummary", "branchSummary"):
            raise ValueError(f"{role} messages are stored as their own entry types, not as message entries")
        if isinstance(message, AssistantMessage) and message.stop_reason == "pending":
            raise ValueError("A pending assistant message is never persisted")
        return self._append(MessageEntry(**self._next_header(), message=message))

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(ModelChangeEntry(**self._next_header(), provider=provider, model_id=model_id))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append(ThinkingLevelChangeEntry(**self._next_header(), thinking_level=thinking_level))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,  # producer-defined JSON value
        from_hook: bool = False,
        usage: Usage | None = None,
        retained_tail: Sequence[AgentMessage] | None = None,
        *,
        trigger: str | None = None,
        tokens_after: int | None = None,
        model: str | None = None,
    ) -> str:
        """Append a `compaction` entry; returns its id. `trigger`, `tokens_after` and `model` are Apex bookkeeping,
        written only when given (`trigger`, `tokensAfter`, `model` on the wire)."""
        tail = [dump_message(m) for m in retained_tail] if retained_tail is not None else None
        return self._append(
            CompactionEntry(
                **self._next_header(),
                summary=summary,
                first_kept_entry_id=first_kept_entry_id,
                tokens_before=tokens_before,
                retained_tail=tail,
                details=details,
                usage=usage,
                from_hook=from_hook,
                trigger=trigger,
                tokens_after=tokens_after,
                model=model,
            )
        )

    def branch_with_summary(
        self,
        target_id: str | None,
        summary: str,
        details: Any = None,  # producer-defined JSON value
        from_hook: bool = False,
        usage: Usage | None = None,
    ) -> str:
        """Leaf := target (None = root), then append a `branch_summary` there; returns its id."""
        if target_id is None:
            self.reset_leaf()
        else:
            self.branch(target_id)
        from_id = target_id if target_id is not None else "root"
        return self._append(
            BranchSummaryEntry(
                **self._next_header(),
                from_id=from_id,
                summary=summary,
                details=details,
                usage=usage,
                from_hook=from_hook,
            )
        )

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:  # data: extension JSON value
        return self._append(CustomEntry(**self._next_header(), custom_type=custom_type, data=data))

    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | list[UserContent],
        display: bool,
        details: Any = None,  # extension JSON value
    ) -> str:
        return self._append(
            CustomMessageEntry(
                **self._next_header(),
                custom_type=custom_type,
                content=content,
                display=display,
                details=details,
            )
        )

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """Set (or with an empty/None label, clear) the label of `target_id`."""
        if target_id not in self._by_id:
            raise KeyError(f"Entry {target_id} not found")
        value = label if label else None
        return self._append(LabelEntry(**self._next_header(), target_id=target_id, label=value))

    def append_session_info(self, name: str) -> str:
        """Set the session name (CR/LF runs become one space, trimmed; empty clears)."""
        clean = _NEWLINES.sub(" ", name).strip()
        return self._append(SessionInfoEntry(**self._next_header(), name=clean))

    def _next_header(self, timestamp: str | None = None) -> _EntryHeader:
        """Id, parent (the current leaf) and time (default: now) of the entry about to be appended."""
        return {"id": new_entry_id(self._by_id), "parent_id": self._leaf_id, "timestamp": timestamp or iso_now()}

    def _append(self, entry: EntryBase) -> str:
        """Persist and index `entry`, built on `_next_header()`; returns its id."""
        line = dump_line(entry)
        record = Record.from_entry(entry, line)
        self._persist(record, line)
        self._index(record)
        return entry.id

    # ------------------------------------------------------------------ indexing and persistence

    def _index(self, record: Record) -> None:
        self._records.append(record)
        self._by_id[record.id] = record
        self._leaf_id = record.id
        if record.type == "label":
            entry = record.entry
            if isinstance(entry, LabelEntry):
                if entry.label:
                    self._labels[entry.target_id] = (entry.label, entry.timestamp)
                else:
                    self._labels.pop(entry.target_id, None)
        elif record.type == "session_info":
            entry = record.entry
            if isinstance(entry, SessionInfoEntry):
                self._name = (entry.name or "").strip() or None
        elif record.type == "message" and not self._has_assistant:
            entry = record.entry
            self._has_assistant = isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)

    def _persist(self, record: Record, line: bytes) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            if self._on_disk:
                if not writer.is_open:
                    writer.open_existing(self._disk_size)
                writer.append(line)
            else:
                is_assistant = isinstance(record.entry, MessageEntry) and isinstance(
                    record.entry.message, AssistantMessage
                )
                if not (self._has_assistant or is_assistant):
                    return  # deferred: nothing is written before the first assistant message
                if self._id_lock is not None:
                    self._id_lock.acquire()
                    self._check_id_unused(writer)
                writer.create(dump_line(self._header) + b"".join(r.raw + b"\n" for r in self._records) + line)
        except OSError as exc:
            raise SessionWriteError(f"Could not write session file {writer.path}: {exc.strerror or exc}") from exc
        self._on_disk = True
        self._unindexed += 1

    def _update_index(self) -> None:
        """Tell the session index about the lines appended since last time, on close: never on the append path (an
        append costs the same with the index as without). Best effort, and only a shortcut: a process listing the
        sessions meanwhile sees the file's new size and reads its new tail itself."""
        self._unindexed = 0
        if self._session_file is not None:
            from apex_coding_agent.session.index import update_index_for

            update_index_for(self._session_file)

    def _check_id_unused(self, writer: SessionWriter) -> None:
        """One id, one file: a caller-chosen id whose file appeared in the meantime is not created twice."""
        for other in writer.target.parent.glob(f"*_{self._header.id}.jsonl"):
            if other != writer.target:
                raise SessionFileError(f"A session with id {self._header.id} already exists: {other}")

    def _rewrite(self, data: bytes) -> None:
        assert self._writer is not None
        self._writer.rewrite(data)
        self._on_disk = True

    def lock_for_writing(self) -> None:
        """Become this session's only writer now rather than at the first write: take the file's lock (and open it
        for appending when it exists; a file not created yet is claimed by its path), and the lock of a
        caller-chosen id. Raises `SessionLockedError` naming the holder's pid. Held until `close`."""
        if self._writer is None:
            return
        try:
            if self._id_lock is not None:
                self._id_lock.acquire()
            if self._on_disk:
                if not self._writer.is_open:
                    self._writer.open_existing(self._disk_size)
            else:
                self._writer.lock.acquire()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the file (lock and descriptor). The manager may write again later; it re-locks then."""
        if self._unindexed:
            self._update_index()
        if self._writer is not None:
            self._writer.close()
        if self._id_lock is not None:
            self._id_lock.release()

    def __enter__(self) -> SessionManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ replacement

    def new_session(self, parent_session: str | None = None, id: str | None = None) -> None:
        """Start a fresh session in the same dir (in-memory stays in-memory)."""
        self.close()
        header = new_header(self.cwd, id, parent_session=parent_session)
        file = self.session_dir / session_file_name(header) if self.is_persisted and self.session_dir else None
        self._reset(header, file, None, explicit_id=id is not None)

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Switch to a new session holding the path root -> `leaf_id` (labels re-created at the end).

        Kept entries are copied verbatim except where the parent link had to change (a dropped label in between).
        Returns the new file (None in memory). Written at once when the path holds an assistant message.
        """
        if self.is_persisted and not self._on_disk:
            raise SessionFileError(
                "This session has not been saved yet. Wait for the first assistant response before cloning or "
                "forking it."
            )
        path = [r for r in self._path(leaf_id) if r.type != "label"]
        labels = {r.id: self._labels[r.id] for r in path if r.id in self._labels}
        previous_file = str(self._session_file) if self._session_file is not None else None
        self.new_session(parent_session=previous_file)
        parent: str | None = None
        for record in path:
            if record.parent_id == parent:
                line = record.raw + b"\n"
            else:
                data = json.loads(record.raw)
                data["parentId"] = parent
                line = dump_dict_line(data)
            copy = Record(record.type, record.id, parent, record.timestamp, line, entry=None)
            self._persist(copy, line)
            self._index(copy)
            parent = record.id
        for target, (label, stamp) in labels.items():
            self._append(LabelEntry(**self._next_header(stamp), target_id=target, label=label))
        return self._session_file


__all__ = [
    "SESSION_ID_ERROR",
    "SessionManager",
    "TreeNode",
    "first_user_text",
    "session_file_name",
    "uuid7",
    "validate_session_id",
]
