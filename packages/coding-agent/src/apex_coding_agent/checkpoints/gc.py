"""Removing blobs no session refers to.

Every session file below the given folders is read line by line; only lines of the checkpoint entry types are
looked at, and every blob hash in them is kept. A blob younger than `grace_seconds` is kept too: a running
session may have stored it for a turn whose manifest is not written yet.

The folders are the sessions folder, the ones the caller names, and every folder a session that stored a
checkpoint was written in (`<agentDir>/checkpoints/session-dirs`, one path a line): a session kept in a custom
`--session-dir` or a project's own `sessionDir` keeps its blobs although no later gc is told about that folder.
When a session file cannot be read, nothing is removed: its blobs cannot be told from unused ones.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from apex_coding_agent.checkpoints.blobs import BlobStore

_MARKERS = (b'"customType":"apex-code.checkpoint"', b'"customType":"apex-code.rewind"')
_HASH = re.compile(rb"\b[0-9a-f]{64}\b")
DEFAULT_GRACE_SECONDS = 3600


SESSION_DIRS_FILE = "session-dirs"


@dataclass(frozen=True)
class GarbageReport:
    removed: int
    freed_bytes: int
    kept: int
    unreadable: tuple[str, ...] = ()
    """Session files that could not be read; when there are any, no blob was removed."""


@dataclass
class References:
    blobs: set[str] = field(default_factory=set)
    unreadable: list[str] = field(default_factory=list)


def referenced_blobs(session_dirs: Iterable[Path]) -> References:
    found = References()
    for directory in session_dirs:
        if not directory.is_dir():
            continue
        for path in directory.rglob("*.jsonl"):
            try:
                if not stat.S_ISREG(path.stat().st_mode):
                    continue  # not a session (a FIFO would block the read)
                with open(path, "rb") as handle:
                    for line in handle:
                        if any(marker in line for marker in _MARKERS):
                            found.blobs.update(match.decode() for match in _HASH.findall(line))
            except FileNotFoundError:
                continue  # deleted meanwhile, or a dangling link: refers to nothing
            except OSError:
                found.unreadable.append(str(path))
    return found


def remember_session_dir(checkpoints_dir: Path, session_dir: str) -> None:
    """Add `session_dir` to the folders every later gc reads (once; appends are atomic for a line this short)."""
    if session_dir in remembered_session_dirs(checkpoints_dir):
        return
    checkpoints_dir.mkdir(parents=True, exist_ok=True)
    with open(checkpoints_dir / SESSION_DIRS_FILE, "a", encoding="utf-8") as handle:
        handle.write(session_dir + "\n")


def remembered_session_dirs(checkpoints_dir: Path) -> list[str]:
    try:
        text = (checkpoints_dir / SESSION_DIRS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line.strip()]


def collect_garbage(
    store: BlobStore, session_dirs: Iterable[Path], grace_seconds: float = DEFAULT_GRACE_SECONDS
) -> GarbageReport:
    references = referenced_blobs(session_dirs)
    if references.unreadable:
        return GarbageReport(0, 0, sum(1 for _ in store.digests()), tuple(references.unreadable))
    keep = references.blobs
    cutoff = time.time() - grace_seconds
    removed = freed = kept = 0
    for digest, path in store.digests():
        try:
            info = path.stat()
        except OSError:
            continue
        if digest in keep or info.st_mtime > cutoff:
            kept += 1
            continue
        try:
            os.unlink(path)
        except OSError:
            kept += 1
            continue
        removed += 1
        freed += info.st_size
    return GarbageReport(removed, freed, kept)


def collect_unreferenced_blobs(
    agent_dir: str | os.PathLike[str],
    session_dirs: Iterable[Path] = (),
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
) -> GarbageReport:
    """`collect_garbage` on the blob store of `agent_dir`, keeping what any session file under its sessions folder,
    under `session_dirs` (custom session folders) or under a folder a checkpointing session was written in refers
    to."""
    from apex_coding_agent.checkpoints.manager import blob_dir

    store_dir = blob_dir(agent_dir)
    folders = {
        Path(agent_dir) / "sessions",
        *(Path(d) for d in session_dirs),
        *(Path(d) for d in remembered_session_dirs(store_dir.parent)),
    }
    return collect_garbage(BlobStore(store_dir), sorted(folders), grace_seconds)


__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "GarbageReport",
    "References",
    "SESSION_DIRS_FILE",
    "collect_garbage",
    "collect_unreferenced_blobs",
    "referenced_blobs",
    "remember_session_dir",
    "remembered_session_dirs",
]
