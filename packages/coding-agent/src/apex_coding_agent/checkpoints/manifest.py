"""The checkpoint records kept in the session file, as `custom` entries with types of their own.

* `apex-code.checkpoint` — one per user turn that changed files: each file's content before the turn's first change
  (a blob hash, or None when the file did not exist) and after the agent's last change (to tell the agent's work
  from someone else's), plus the files that were not kept (too large, over the turn's cap, outside the project).
* `apex-code.rewind` — a rewind: what it restored and the content it replaced, so that `redo` can put it back.
* `apex-code.redo` — marks a files-only rewind as redone.

Custom entries never reach the model, and a reader that does not know these types keeps them as they are.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import ValidationError

from apex_ai._wire import WireModel
from apex_coding_agent.session.entries import CustomEntry, EntryBase

CHECKPOINT_TYPE = "apex-code.checkpoint"
REWIND_TYPE = "apex-code.rewind"
REDO_TYPE = "apex-code.redo"

RewindMode = Literal["all", "conversation", "files"]
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_TURN_BYTES = 100 * 1024 * 1024


class FileChange(WireModel):
    """One file of a turn. `path` is relative to the project root, with `/` separators."""

    path: str
    before: str | None
    """Hash of the content before the turn's first change; None: the file did not exist."""
    after: str | None
    """Hash of the content after the agent's last change; None: the agent removed it."""
    mode: int | None = None
    """Permission bits of the file before the change (restored with it)."""
    via: str | None = None
    """The tool that first changed it: `write`, `edit` or `bash`."""


class SkippedFile(WireModel):
    path: str
    reason: str
    size: int | None = None


class TurnManifest(WireModel):
    version: int = 1
    user_entry_id: str | None
    files: list[FileChange]
    skipped: list[SkippedFile] = []


class RestoredFile(WireModel):
    path: str
    before: str | None
    """Content the rewind replaced (what `redo` puts back)."""
    after: str | None
    """Content the rewind wrote."""
    mode: int | None = None


class RewindRecord(WireModel):
    version: int = 1
    target_entry_id: str
    from_leaf_id: str | None
    mode: RewindMode
    files: list[RestoredFile]


_Record = TypeVar("_Record", bound=WireModel)


class RedoRecord(WireModel):
    version: int = 1
    rewind_entry_id: str
    files: list[RestoredFile]


def turn_manifest(entry: EntryBase) -> TurnManifest | None:
    """The manifest of a checkpoint entry; None for any other entry (or a damaged one)."""
    return _parse(entry, CHECKPOINT_TYPE, TurnManifest)


def rewind_record(entry: EntryBase) -> RewindRecord | None:
    return _parse(entry, REWIND_TYPE, RewindRecord)


def restored_files(entry: EntryBase) -> list[RestoredFile]:
    """The files a rewind or a redo entry wrote; [] for any other entry."""
    record = _parse(entry, REWIND_TYPE, RewindRecord) or _parse(entry, REDO_TYPE, RedoRecord)
    return record.files if record is not None else []


def _parse(entry: EntryBase, custom_type: str, model: type[_Record]) -> _Record | None:
    if not isinstance(entry, CustomEntry) or entry.custom_type != custom_type or not isinstance(entry.data, dict):
        return None
    try:
        return model.model_validate(entry.data)
    except ValidationError:
        return None


__all__ = [
    "CHECKPOINT_TYPE",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_TURN_BYTES",
    "REDO_TYPE",
    "REWIND_TYPE",
    "FileChange",
    "RedoRecord",
    "RestoredFile",
    "RewindMode",
    "RewindRecord",
    "SkippedFile",
    "TurnManifest",
    "restored_files",
    "rewind_record",
    "turn_manifest",
]
