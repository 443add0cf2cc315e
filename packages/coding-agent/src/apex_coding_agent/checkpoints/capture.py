"""`TurnCapture`: the files one user turn changed, each kept once, before its first change.

`write` and `edit` name their file, so it is read just before the tool runs; `bash` changes come from the scanner
(scan.py). Caps: a file larger than `max_file_bytes` and the files past the turn's `max_turn_bytes` are not kept,
and are listed in the manifest's `skipped` with the reason, so a rewind can say what it cannot restore.
"""

from __future__ import annotations

import os
import stat

from apex_coding_agent.checkpoints.blobs import BlobStore, content_hash
from apex_coding_agent.checkpoints.manifest import FileChange, SkippedFile, TurnManifest
from apex_coding_agent.checkpoints.scan import ScanChange


def relative_path(root: str, path: str) -> str | None:
    """`path` relative to the (real) project root with `/` separators; None when it lies outside.

    The parent directory is resolved (a symlinked folder counts where it points), the file name is not.
    """
    absolute = os.path.abspath(path)
    parent = os.path.realpath(os.path.dirname(absolute))
    full = os.path.join(parent, os.path.basename(absolute))
    relative = os.path.relpath(full, root)
    if relative == "." or relative.startswith(".." + os.sep) or relative == ".." or os.path.isabs(relative):
        return None
    return relative.replace(os.sep, "/")


def read_state(path: str, max_bytes: int | None = None) -> tuple[bytes | None, os.stat_result | None]:
    """(content, stat) of a regular file; (None, None) when absent; content None when over `max_bytes`.

    Raises `IsADirectoryError`/`OSError` for what is neither (a symlink counts as neither: it is never followed).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"not a regular file: {path}")
    if max_bytes is not None and info.st_size > max_bytes:
        return None, info
    with open(path, "rb") as handle:
        return handle.read(), info


class TurnCapture:
    def __init__(self, root: str, store: BlobStore, max_file_bytes: int, max_turn_bytes: int) -> None:
        self.root = os.path.realpath(root)
        self.store = store
        self.max_file_bytes = max_file_bytes
        self.max_turn_bytes = max_turn_bytes
        self.user_entry_id: str | None = None
        self.files: dict[str, FileChange] = {}
        self.skipped: dict[str, SkippedFile] = {}
        self.bytes = 0

    def start(self, user_entry_id: str | None) -> None:
        self.user_entry_id = user_entry_id
        self.files = {}
        self.skipped = {}
        self.bytes = 0

    def take(self) -> TurnManifest | None:
        """The turn's manifest so far (None when nothing changed); the turn goes on with an empty record."""
        files = [change for change in self.files.values() if change.before != change.after]
        manifest = None
        if files or self.skipped:
            manifest = TurnManifest(user_entry_id=self.user_entry_id, files=files, skipped=list(self.skipped.values()))
        self.start(self.user_entry_id)
        return manifest

    def _skip(self, rel: str, reason: str, size: int | None) -> None:
        self.skipped.setdefault(rel, SkippedFile(path=rel, reason=reason, size=size))

    def _fits(self, rel: str, size: int) -> bool:
        if size > self.max_file_bytes:
            self._skip(rel, "larger than the file cap", size)
            return False
        if self.bytes + size > self.max_turn_bytes:
            self._skip(rel, "over the turn's cap", size)
            return False
        self.bytes += size
        return True

    def before_file(self, path: str, via: str) -> str | None:
        """Keep `path`'s content before a tool changes it; returns its project-relative path (None: not kept)."""
        rel = relative_path(self.root, path)
        if rel is None:
            self._skip(os.path.abspath(path), "outside the project", None)
            return None
        if rel in self.files or rel in self.skipped:
            return rel
        try:
            data, info = read_state(os.path.join(self.root, rel), self.max_file_bytes)
        except OSError as exc:
            self._skip(rel, f"not kept: {exc.strerror or exc}", None)
            return None
        if info is None:
            self.files[rel] = FileChange(path=rel, before=None, after=None, via=via)
            return rel
        if data is None or not self._fits(rel, info.st_size):
            self._skip(rel, "larger than the file cap", info.st_size)
            return None
        digest = self.store.put(data)
        self.files[rel] = FileChange(path=rel, before=digest, after=digest, mode=stat.S_IMODE(info.st_mode), via=via)
        return rel

    def after_file(self, rel: str) -> None:
        """Note what the tool left in `rel` (for telling the agent's content from a later edit by someone else)."""
        change = self.files.get(rel)
        if change is None:
            return
        try:
            data, _ = read_state(os.path.join(self.root, rel))
        except OSError:
            data = None
        change.after = None if data is None else content_hash(data)

    def add_scan(self, changes: list[ScanChange]) -> None:
        for change in changes:
            known = self.files.get(change.path)
            if known is not None:
                known.after = change.after
                continue
            if change.path in self.skipped:
                continue
            if change.unknown is not None:
                self._skip(change.path, change.unknown, change.size)
                continue
            if change.before is not None and not self._fits(change.path, change.size or 0):
                continue
            self.files[change.path] = FileChange(
                path=change.path, before=change.before, after=change.after, mode=change.mode, via="bash"
            )


__all__ = ["TurnCapture", "read_state", "relative_path"]
