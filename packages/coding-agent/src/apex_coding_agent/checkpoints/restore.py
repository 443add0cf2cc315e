"""Putting files back: plan (what would change, what conflicts), then an atomic write per file, under a journal.

A file is only overwritten when it still holds what the agent left (`expected`): anything else means someone
changed it since, and it is reported as a conflict unless the caller named it in `overwrite`. Each file is written
to a temp file beside it and renamed over it. Before the first file, the journal (one per session) lists every
file's target and previous content (both in the blob store); it is removed when all are done, so a restore cut
short is found on the next start and can be completed or reverted. A path whose folder resolves outside the
project, or that is itself a symlink, is never written.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from apex_coding_agent.checkpoints.blobs import BlobStore, content_hash
from apex_coding_agent.checkpoints.capture import read_state
from apex_coding_agent.checkpoints.manifest import RestoredFile


@dataclass(frozen=True)
class RestoreOp:
    path: str
    target: str | None
    """Hash of the content to put back; None: the file must not exist."""
    expected: str | None
    """What the agent left there: the file is only overwritten while it holds this."""
    mode: int | None = None


@dataclass(frozen=True)
class Conflict:
    path: str
    reason: str
    current: str | None = None
    """Hash of what the file holds now (None: absent or unreadable)."""

    def to_wire(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class RestorePlan:
    to_write: list[tuple[RestoreOp, str | None]] = field(default_factory=list)
    """Each op with the current content's hash (already kept in the store: redo needs it)."""
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


class UnsafePath(Exception):
    pass


CHANGED_TEXT = "changed since the agent last wrote it"


def safe_path(root: str, rel: str) -> str:
    """The absolute path of `rel` inside `root`; raises `UnsafePath` for one that leaves it or is a symlink."""
    absolute = os.path.normpath(os.path.join(root, rel))
    if not absolute.startswith(root.rstrip(os.sep) + os.sep):
        raise UnsafePath("outside the project")
    ancestor = os.path.dirname(absolute)
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    real = os.path.realpath(ancestor)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise UnsafePath("its folder is a link out of the project")
    if os.path.islink(absolute):
        raise UnsafePath("it is a symlink now")
    return absolute


def plan_restore(root: str, store: BlobStore, ops: Sequence[RestoreOp], overwrite: Collection[str] = ()) -> RestorePlan:
    plan = RestorePlan()
    for op in ops:
        try:
            absolute = safe_path(root, op.path)
            data, _ = read_state(absolute)
        except (UnsafePath, OSError) as exc:
            plan.conflicts.append(Conflict(op.path, str(exc)))
            continue
        current = None if data is None else content_hash(data)
        if current == op.target:
            plan.unchanged.append(op.path)
            continue
        if op.target is not None and not store.has(op.target):
            plan.conflicts.append(Conflict(op.path, "its checkpoint content is gone from the blob store", current))
            continue
        if current != op.expected and op.path not in overwrite:
            plan.conflicts.append(Conflict(op.path, CHANGED_TEXT, current))
            continue
        if data is not None:
            store.put(data)
        plan.to_write.append((op, current))
    return plan


def _default_mode(absolute: str) -> int:
    """The mode of the file being replaced, else what a new file gets (`mkstemp` would leave 0600)."""
    try:
        return os.stat(absolute).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(absolute: str, data: bytes, mode: int | None) -> None:
    directory = os.path.dirname(absolute)
    os.makedirs(directory, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(absolute)}.", suffix=".apex-restore")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, mode if mode is not None else _default_mode(absolute))
        os.replace(temp, absolute)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _put(root: str, store: BlobStore, rel: str, digest: str | None, mode: int | None) -> None:
    absolute = safe_path(root, rel)
    if digest is None:
        try:
            os.unlink(absolute)
        except FileNotFoundError:
            pass
        return
    write_atomic(absolute, store.get(digest), mode)


class Journal:
    """The record of a restore under way: `<agent dir>/checkpoints/journal/<session id>.json`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, root: str, files: list[RestoredFile]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"root": root, "files": [f.model_dump(mode="json") for f in files]}
        temp = self.path.with_suffix(".tmp")
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, self.path)

    def read(self) -> tuple[str, list[RestoredFile]] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return str(data["root"]), [RestoredFile.model_validate(item) for item in data["files"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def clear(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def apply_restore(
    root: str,
    store: BlobStore,
    journal: Journal,
    plan: RestorePlan,
    on_file: Callable[[str], None] | None = None,
) -> list[RestoredFile]:
    """Write every planned file; returns what was restored (`before`: the content it replaced)."""
    files = [RestoredFile(path=op.path, before=current, after=op.target, mode=op.mode) for op, current in plan.to_write]
    if not files:
        return files
    journal.write(root, files)
    for item in files:
        _put(root, store, item.path, item.after, item.mode)
        if on_file is not None:
            on_file(item.path)
    journal.clear()
    return files


def recover_restore(
    store: BlobStore, journal: Journal, action: Literal["complete", "revert"]
) -> tuple[list[str], list[Conflict]]:
    """Finish (`complete`) or undo (`revert`) the restore the journal describes; returns (files written, conflicts).

    A file holding neither side was changed by someone else after the interruption and is left alone.
    """
    found = journal.read()
    if found is None:
        journal.clear()
        return [], []
    root, files = found
    written: list[str] = []
    conflicts: list[Conflict] = []
    for item in files:
        want, other = (item.after, item.before) if action == "complete" else (item.before, item.after)
        try:
            data, _ = read_state(safe_path(root, item.path))
        except (UnsafePath, OSError) as exc:
            conflicts.append(Conflict(item.path, str(exc)))
            continue
        current = None if data is None else content_hash(data)
        if current == want:
            continue
        if current != other:
            conflicts.append(Conflict(item.path, CHANGED_TEXT, current))
            continue
        _put(root, store, item.path, want, item.mode)
        written.append(item.path)
    journal.clear()
    return written, conflicts


__all__ = [
    "CHANGED_TEXT",
    "Conflict",
    "Journal",
    "RestoreOp",
    "RestorePlan",
    "UnsafePath",
    "apply_restore",
    "plan_restore",
    "recover_restore",
    "safe_path",
    "write_atomic",
]
