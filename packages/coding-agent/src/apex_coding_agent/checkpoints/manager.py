"""`Checkpoints`: file checkpoints of one `AgentSession`, tied to its session tree.

The session calls `before_tool` / `after_tool` around every allowed tool call (agent_hooks.py); the turn's
record (capture.py) becomes an `apex-code.checkpoint` entry when the next user message arrives and when the run
ends. `rewind` restores the files as they were before an earlier user message of the branch (and/or moves the
conversation there), `redo` undoes the last rewind. See docs/checkpoints.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from apex_agent.events import MessageEndEvent
from apex_ai.types import UserMessage
from apex_coding_agent.checkpoints.manifest import (
    CHECKPOINT_TYPE,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TURN_BYTES,
    REDO_TYPE,
    REWIND_TYPE,
    RedoRecord,
    RestoredFile,
    RewindMode,
    RewindRecord,
    SkippedFile,
    TurnManifest,
    restored_files,
    rewind_record,
    turn_manifest,
)
from apex_coding_agent.events import SessionAgentEndEvent, SessionEvent
from apex_coding_agent.session.entries import EntryBase, MessageEntry
from apex_coding_agent.session.session_manager import first_user_text
from apex_coding_agent.tools.path_utils import resolve_to_cwd

if TYPE_CHECKING:
    # The store, the scanner and the restore engine load on first use: a session builds its `Checkpoints` at
    # start-up, most runs never rewind, and a turn may change no file at all.
    from apex_coding_agent.checkpoints.blobs import BlobStore
    from apex_coding_agent.checkpoints.capture import TurnCapture
    from apex_coding_agent.checkpoints.restore import Conflict, Journal, RestoreOp, RestorePlan
    from apex_coding_agent.checkpoints.scan import ProjectScanner, ScanState
    from apex_coding_agent.runtime.agent_session import AgentSession

_log = logging.getLogger(__name__)
FILE_TOOLS = ("write", "edit")
BASELINE_BYTES = 256 * 1024 * 1024
"""Content a session keeps ahead of `bash` commands (plain folders: every file; git: the dirty ones)."""
REWIND_WHILE_STREAMING = "Cannot rewind while the agent is working; wait for it or abort it first."


def blob_dir(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / "checkpoints" / "blobs"


@dataclass(frozen=True)
class Checkpoint:
    """A user message of the branch one can rewind to, with the files its turn changed."""

    entry_id: str
    text: str
    files: list[str]
    skipped: list[SkippedFile]

    def to_wire(self) -> dict[str, object]:
        return {
            "entryId": self.entry_id,
            "text": self.text,
            "files": self.files,
            "skipped": [item.model_dump(mode="json") for item in self.skipped],
        }


@dataclass
class RewindResult:
    restored: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    """Files the turns changed that were not kept (too large...): they stay as they are."""
    editor_text: str | None = None
    entry_id: str | None = None
    """The `apex-code.rewind` entry (redo reads it)."""

    def to_wire(self) -> dict[str, object]:
        data: dict[str, object] = {
            "restored": self.restored,
            "conflicts": [conflict.to_wire() for conflict in self.conflicts],
            "skipped": [item.model_dump(mode="json") for item in self.skipped],
        }
        if self.editor_text is not None:
            data["editorText"] = self.editor_text
        if self.entry_id is not None:
            data["entryId"] = self.entry_id
        return data


def _ops_of(entries: Sequence[EntryBase | TurnManifest]) -> tuple[list[RestoreOp], list[SkippedFile]]:
    """What restores the files to their state before `entries` (a stretch of a timeline, oldest first)."""
    from apex_coding_agent.checkpoints.restore import RestoreOp

    first: dict[str, RestoreOp] = {}
    last_after: dict[str, str | None] = {}
    skipped: dict[str, SkippedFile] = {}
    for entry in entries:
        if not isinstance(entry, TurnManifest):
            # An earlier files-only rewind (or redo) on this branch wrote files too.
            for written in restored_files(entry):
                if written.path in last_after:
                    last_after[written.path] = written.after
            continue
        for change in entry.files:
            if change.path not in first:
                first[change.path] = RestoreOp(change.path, change.before, None, change.mode)
            last_after[change.path] = change.after
        for item in entry.skipped:
            skipped.setdefault(item.path, item)
    ops = [RestoreOp(op.path, op.target, last_after[op.path], op.mode) for op in first.values()]
    return ops, [item for path, item in skipped.items() if path not in first]


class Checkpoints:
    def __init__(self, session: AgentSession) -> None:
        settings = session.settings_manager
        self._session = session
        self.enabled = settings.get_bool("checkpoints.enabled", True)
        self.max_file_bytes = settings.get_int("checkpoints.maxFileBytes", DEFAULT_MAX_FILE_BYTES, minimum=0)
        self.max_turn_bytes = settings.get_int("checkpoints.maxTurnBytes", DEFAULT_MAX_TURN_BYTES, minimum=0)
        self.root = os.path.realpath(session.cwd)
        self._store: BlobStore | None = None
        self._turn: TurnCapture | None = None
        self._user_entry_id: str | None = None
        self._scanner: ProjectScanner | None = None
        self._scan_lock = asyncio.Lock()
        """Parallel `bash` calls scan one at a time (the scanner's record of known files is shared)."""
        self._bash: dict[str, ScanState] = {}
        self._remembered: str | None = None
        self.on_restore_file: Callable[[str], None] | None = None
        """Called after each restored file (tests use it to cut a restore short)."""
        session.subscribe(self._on_event)

    @property
    def store(self) -> BlobStore:
        if self._store is None:
            from apex_coding_agent.checkpoints.blobs import BlobStore

            self._store = BlobStore(blob_dir(self._session.agent_dir))
        return self._store

    @property
    def _capture(self) -> TurnCapture:
        if self._turn is None:
            from apex_coding_agent.checkpoints.capture import TurnCapture

            self._turn = TurnCapture(self.root, self.store, self.max_file_bytes, self.max_turn_bytes)
            self._turn.start(self._user_entry_id)
        return self._turn

    @property
    def journal_path(self) -> Path:
        return Path(self._session.agent_dir) / "checkpoints" / "journal" / f"{self._session.session_id}.json"

    @property
    def journal(self) -> Journal:
        from apex_coding_agent.checkpoints.restore import Journal

        return Journal(self.journal_path)

    @property
    def scanner(self) -> ProjectScanner:
        if self._scanner is None:
            from apex_coding_agent.checkpoints.scan import ProjectScanner

            self._scanner = ProjectScanner(
                self.root, self.store, self.max_file_bytes, self._session.agent_dir, BASELINE_BYTES
            )
        return self._scanner

    def close(self) -> None:
        """The session is disposed: remove the scanner's temporary files (its private git index copy)."""
        if self._scanner is not None:
            self._scanner.close()
            self._scanner = None  # a later scan starts afresh

    # ----------------------------------------------------------------- capture

    async def before_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None:  # Any: tool arguments
        if not self.enabled:
            return
        try:
            await self._before_tool(name, tool_call_id, args)
        except Exception as exc:  # keeping a checkpoint never stops the tool: the turn records what was not kept
            self._not_kept(name, args, exc)

    async def after_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None:  # Any: tool arguments
        if not self.enabled:
            return
        try:
            await self._after_tool(name, tool_call_id, args)
        except Exception as exc:  # as above
            self._not_kept(name, args, exc)

    def _not_kept(self, name: str, args: dict[str, Any], exc: Exception) -> None:  # Any: tool arguments
        path = args.get("path") if name in FILE_TOOLS else None
        where = path if isinstance(path, str) else "*"
        self._capture.skipped.setdefault(where, SkippedFile(path=where, reason=f"checkpoint failed ({name}): {exc}"))
        _log.warning("checkpoint of %s failed: %s", name, exc)

    async def _before_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None:  # Any: tool arguments
        if name in FILE_TOOLS and isinstance(args.get("path"), str):
            self._capture.before_file(resolve_to_cwd(args["path"], self._session.cwd), name)
        elif name == "bash":
            async with self._scan_lock:
                self._bash[tool_call_id] = await asyncio.to_thread(self.scanner.before)

    async def _after_tool(self, name: str, tool_call_id: str, args: dict[str, Any]) -> None:  # Any: tool arguments
        if name in FILE_TOOLS and isinstance(args.get("path"), str):
            rel = self._capture.before_file(resolve_to_cwd(args["path"], self._session.cwd), name)
            if rel is not None:
                self._capture.after_file(rel)
        elif name == "bash" and tool_call_id in self._bash:
            state = self._bash.pop(tool_call_id)
            async with self._scan_lock:
                self._capture.add_scan(await asyncio.to_thread(self.scanner.after, state))

    def _on_event(self, event: SessionEvent) -> None:
        if isinstance(event, MessageEndEvent) and isinstance(event.message, UserMessage):
            self.flush()
            self._user_entry_id = self._session.session_manager.get_leaf_id()
            if self._turn is not None:
                self._turn.start(self._user_entry_id)
        elif isinstance(event, SessionAgentEndEvent):
            self.flush()

    def flush(self) -> str | None:
        """Append the turn's manifest so far (if it changed anything); returns the entry id."""
        manifest = self._turn.take() if self._turn is not None else None
        if manifest is None:
            return None
        if manifest.user_entry_id is None:
            manifest.user_entry_id = self._last_user_entry()
        return self._append(CHECKPOINT_TYPE, manifest.model_dump(mode="json"))

    def _append(self, custom_type: str, data: dict[str, Any]) -> str:  # Any: JSON values
        # Straight to the file, without an `entry_appended` event: JSON output stays what the original product
        # writes (clients read checkpoints with `get_checkpoints`).
        manager = self._session.session_manager
        entry_id = manager.append_custom_entry(custom_type, data)
        self._remember_session_dir(manager.session_file)
        return entry_id

    def _remember_session_dir(self, session_file: str | os.PathLike[str] | None) -> None:
        """Tell later gc runs where this session lives, wherever that is (see checkpoints/gc.py)."""
        if session_file is None or self._remembered == os.fspath(session_file):
            return
        from apex_coding_agent.checkpoints.gc import remember_session_dir

        try:
            remember_session_dir(
                blob_dir(self._session.agent_dir).parent, os.path.dirname(os.path.abspath(session_file))
            )
        except OSError:
            _log.warning("Could not record the session folder for checkpoint gc", exc_info=True)
            return
        self._remembered = os.fspath(session_file)

    def _last_user_entry(self) -> str | None:
        for entry in reversed(self._session.session_manager.get_branch()):
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                return entry.id
        return None

    # ----------------------------------------------------------------- reading the branch

    def get_checkpoints(self) -> list[Checkpoint]:
        """The branch's user messages, oldest first, each with the files its turn changed."""
        out: list[Checkpoint] = []
        manifests = self._manifests()
        for entry in self._session.session_manager.get_branch():
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                point = Checkpoint(entry.id, first_user_text(entry.message) or "", [], [])
                for manifest in manifests.get(entry.id, []):
                    point.files.extend(f.path for f in manifest.files if f.path not in point.files)
                    point.skipped.extend(manifest.skipped)
                out.append(point)
        return out

    def _manifests(self) -> dict[str, list[TurnManifest]]:
        """Every turn manifest of the session (any branch) by its user message, in file order."""
        out: dict[str, list[TurnManifest]] = {}
        for record in self._session.session_manager.iter_records():
            if record.type != "custom":
                continue
            manifest = turn_manifest(record.entry)
            if manifest is not None and manifest.user_entry_id is not None:
                out.setdefault(manifest.user_entry_id, []).append(manifest)
        return out

    def _timeline(self, branch: list[EntryBase]) -> list[EntryBase | TurnManifest]:
        """The branch with each turn's manifests right after its user message (a manifest is written when the turn
        ends, so it may sit on a side branch: `/tree` to the turn's last reply leaves it behind)."""
        manifests = self._manifests()
        out: list[EntryBase | TurnManifest] = []
        for entry in branch:
            if turn_manifest(entry) is not None:
                continue
            out.append(entry)
            if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
                out.extend(manifests.get(entry.id, []))
        return out

    @property
    def can_redo(self) -> bool:
        leaf = self._session.session_manager.get_leaf_entry()
        return leaf is not None and rewind_record(leaf) is not None

    @property
    def pending_restore(self) -> bool:
        """A restore of this session was cut short (see `recover`). Checked when a session opens: no import."""
        return self.journal_path.exists()

    def pending_restore_warning(self) -> str | None:
        """The line shown outside the app when a restore of this session was cut short; None when none was."""
        if not self.pending_restore:
            return None
        return (
            "Warning: a file restore of this session was interrupted; some files may be half restored. Complete or "
            "revert it with the RPC command recover_restore or /rewind in the app; "
            f"`apex-code --session {self._session.session_id} --rewind ENTRY` completes it first."
        )

    def _ops_since(self, entry_id: str) -> tuple[list[RestoreOp], list[SkippedFile]]:
        branch = self._branch_with(entry_id)
        index = next((i for i, e in enumerate(branch) if e.id == entry_id), None)
        if index is None or not (
            isinstance(branch[index], MessageEntry) and isinstance(branch[index].message, UserMessage)  # type: ignore[attr-defined]
        ):
            raise ValueError(f"{entry_id} is not a user message of the current branch")
        timeline = self._timeline(branch)
        return _ops_of(timeline[timeline.index(branch[index]) :])

    def _branch_with(self, entry_id: str) -> list[EntryBase]:
        """The branch; right after a rewind of the conversation, the one it left (so a conflict it reported can
        still be settled by rewinding the files again)."""
        manager = self._session.session_manager
        branch = manager.get_branch()
        leaf = branch[-1] if branch else None
        record = rewind_record(leaf) if leaf is not None else None
        if any(entry.id == entry_id for entry in branch) or record is None or record.from_leaf_id is None:
            return branch
        return [*manager.get_branch(record.from_leaf_id), *branch[-1:]]

    def _left_branch(self, old_leaf_id: str) -> list[EntryBase | TurnManifest]:
        current = {entry.id for entry in self._session.session_manager.get_branch()}

        def left(item: EntryBase | TurnManifest) -> bool:
            return (item.user_entry_id if isinstance(item, TurnManifest) else item.id) not in current

        return [item for item in self._timeline(self._session.session_manager.get_branch(old_leaf_id)) if left(item)]

    def left_branch_files(self, old_leaf_id: str) -> list[str]:
        """Files the turns of the branch one just left (`/tree`) changed, which are not restored yet."""
        from apex_coding_agent.checkpoints.restore import plan_restore

        ops, _ = _ops_of(self._left_branch(old_leaf_id))
        return [op.path for op, _ in plan_restore(self.root, self.store, ops).to_write] if ops else []

    async def restore_left_branch(self, old_leaf_id: str, overwrite: Collection[str] = ()) -> RewindResult:
        """After moving in the tree, put back the files the left branch's turns changed (a files-only rewind)."""
        self._check_idle()
        ops, skipped = _ops_of(self._left_branch(old_leaf_id))
        files, conflicts = await asyncio.to_thread(self._restore, ops, overwrite)
        target = self._session.session_manager.get_leaf_id() or ""
        record = RewindRecord(target_entry_id=target, from_leaf_id=old_leaf_id, mode="files", files=files)
        entry_id = self._append(REWIND_TYPE, record.model_dump(mode="json"))
        return RewindResult([item.path for item in files], conflicts, skipped, entry_id=entry_id)

    def plan_rewind(self, entry_id: str) -> RestorePlan:
        """What `rewind(entry_id)` would do to the files, without doing it (conflicts included)."""
        from apex_coding_agent.checkpoints.restore import plan_restore

        ops, _ = self._ops_since(entry_id)
        return plan_restore(self.root, self.store, ops)

    def diff(self, entry_id: str, path: str) -> str:
        """A unified diff from the file as it is now to its content at the checkpoint."""
        import difflib

        ops, _ = self._ops_since(entry_id)
        op = next((op for op in ops if op.path == path), None)
        if op is None:
            raise ValueError(f"{path} was not changed since {entry_id}")
        try:
            current = (Path(self.root) / path).read_bytes()
        except OSError:
            current = b""
        target = self.store.get(op.target) if op.target is not None else b""
        lines = difflib.unified_diff(
            current.decode("utf-8", "replace").splitlines(keepends=True),
            target.decode("utf-8", "replace").splitlines(keepends=True),
            f"{path} (now)",
            f"{path} (checkpoint)",
        )
        return "".join(lines)

    # ----------------------------------------------------------------- rewind and redo

    def _check_idle(self) -> None:
        if self._session.is_streaming:
            raise RuntimeError(REWIND_WHILE_STREAMING)

    async def rewind(self, entry_id: str, mode: RewindMode = "all", overwrite: Collection[str] = ()) -> RewindResult:
        """Go back to before the user message `entry_id`: files (`files`), conversation (`conversation`), both.

        A file someone else changed since the agent wrote it is left alone and listed in `conflicts`, unless named
        in `overwrite`. The rewind is recorded so that `redo` can undo it.
        """
        self._check_idle()
        self.flush()
        manager = self._session.session_manager
        from_leaf = manager.get_leaf_id()
        result = RewindResult()
        files: list[RestoredFile] = []
        if mode != "conversation":
            ops, result.skipped = self._ops_since(entry_id)
            files, result.conflicts = await asyncio.to_thread(self._restore, ops, overwrite)
            result.restored = [item.path for item in files]
        elif manager.get_entry(entry_id) is None:
            raise ValueError(f"{entry_id} is not a user message of the current branch")
        if mode != "files":
            navigated = await self._session.navigate_tree(entry_id)
            result.editor_text = navigated.editor_text
        record = RewindRecord(target_entry_id=entry_id, from_leaf_id=from_leaf, mode=mode, files=files)
        result.entry_id = self._append(REWIND_TYPE, record.model_dump(mode="json"))
        return result

    def _restore(
        self, ops: Sequence[RestoreOp], overwrite: Collection[str]
    ) -> tuple[list[RestoredFile], list[Conflict]]:
        from apex_coding_agent.checkpoints.restore import apply_restore, plan_restore

        plan = plan_restore(self.root, self.store, ops, overwrite)
        return apply_restore(self.root, self.store, self.journal, plan, self.on_restore_file), plan.conflicts

    async def redo(self, overwrite: Collection[str] = ()) -> RewindResult:
        """Undo the rewind the branch's leaf records: its files get back what it replaced, the conversation its leaf."""
        from apex_coding_agent.checkpoints.restore import RestoreOp

        self._check_idle()
        leaf = self._session.session_manager.get_leaf_entry()
        record = rewind_record(leaf) if leaf is not None else None
        if leaf is None or record is None:
            raise ValueError("Nothing to redo: the last step of this branch is not a rewind")
        ops = [RestoreOp(item.path, item.before, item.after, item.mode) for item in record.files]
        files, conflicts = await asyncio.to_thread(self._restore, ops, overwrite)
        result = RewindResult(restored=[item.path for item in files], conflicts=conflicts)
        if record.mode != "files" and record.from_leaf_id is not None:
            await self._session.navigate_tree(record.from_leaf_id)
        # Recorded in both cases: after a conversation redo the record is the new leaf of the file, so a resumed
        # session opens where the redo left it, not back at the rewind.
        redone = RedoRecord(rewind_entry_id=leaf.id, files=files)
        result.entry_id = self._append(REDO_TYPE, redone.model_dump(mode="json"))
        return result

    def recover(self, action: Literal["complete", "revert"]) -> tuple[list[str], list[Conflict]]:
        """Complete or revert a restore that was cut short; returns (files written, conflicts)."""
        from apex_coding_agent.checkpoints.restore import recover_restore

        return recover_restore(self.store, self.journal, action)


__all__ = ["Checkpoint", "Checkpoints", "REWIND_WHILE_STREAMING", "RewindResult", "blob_dir"]
