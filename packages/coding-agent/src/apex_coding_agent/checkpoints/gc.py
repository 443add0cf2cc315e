"""Removing blobs no session refers to.

Every session file below the given folders is read line by line; only lines of the checkpoint entry types are
looked at, and every blob hash in them is kept. A blob younger than `grace_seconds` is kept too: a running
session may have stored it for a turn whose manifest is not written yet.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from apex_coding_agent.checkpoints.blobs import BlobStore

_MARKERS = (b'"customType":"apex-code.checkpoint"', b'"customType":"apex-code.rewind"')
_HASH = re.compile(rb"\b[0-9a-f]{64}\b")
DEFAULT_GRACE_SECONDS = 3600


@dataclass(frozen=True)
class GarbageReport:
    removed: int
    freed_bytes: int
    kept: int


def referenced_blobs(session_dirs: Iterable[Path]) -> set[str]:
    found: set[str] = set()
    for directory in session_dirs:
        if not directory.is_dir():
            continue
        for path in directory.rglob("*.jsonl"):
            try:
                with open(path, "rb") as handle:
                    for line in handle:
                        if any(marker in line for marker in _MARKERS):
                            found.update(match.decode() for match in _HASH.findall(line))
            except OSError:
                continue
    return found


def collect_garbage(
    store: BlobStore, session_dirs: Iterable[Path], grace_seconds: float = DEFAULT_GRACE_SECONDS
) -> GarbageReport:
    keep = referenced_blobs(session_dirs)
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
    """`collect_garbage` on the blob store of `agent_dir`, keeping what any session file under its sessions folder
    or under `session_dirs` (custom session folders) refers to."""
    from apex_coding_agent.checkpoints.manager import blob_dir

    folders = {Path(agent_dir) / "sessions", *(Path(d) for d in session_dirs)}
    return collect_garbage(BlobStore(blob_dir(agent_dir)), sorted(folders), grace_seconds)


__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "GarbageReport",
    "collect_garbage",
    "collect_unreferenced_blobs",
    "referenced_blobs",
]
