"""Which files of a git worktree are dirty, in one `git status` over a private copy of the index.

Git keeps an untracked cache (the `UNTR` index extension: the stat of each folder and the hash of each `.gitignore`)
that lets `git status` skip reading every folder whose mtime did not change since the last listing; adding or
removing an entry changes its folder's mtime. The user's repository is never touched to get it: the index is copied
into a folder of ours and the cache lives only in that copy (`GIT_INDEX_FILE`, `-c` options, nothing written in the
repository or its config). The copy is taken again whenever the user's index changes (`git add`, `commit`,
`checkout` ...); the next listing then reads every folder once more, as a listing without the cache would.

Git also handles the clock's granularity: a folder whose mtime is not older than the copy's own write time is read
again (the same rule as for racily clean files), so two changes in one tick are both seen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import weakref
from typing import Literal

StatKey = tuple[int, int, int, int]
IndexEntry = tuple[str, int] | None
"""Blob id and permission bits of a dirty tracked file's index entry; None when git has none (unmerged, intent to
add)."""

_OPTIONS = (
    "-c", "core.untrackedCache=true",
    # The cache is kept for one way of listing; a per-call `-uall` would bypass it, the setting does not.
    "-c", "status.showUntrackedFiles=all",
    # Writing our copy must leave the repository alone: a split index would add a shared index file to it.
    "-c", "core.splitIndex=false",
)  # fmt: skip


class GitStatusReader:
    """`dirty()` → (dirty paths, their index entries), paths relative to the worktree's top (the scan root)."""

    def __init__(self, root: str, git_dir: str) -> None:
        self.root = root
        self.user_index = os.path.join(git_dir, "index")
        self.folder = tempfile.mkdtemp(prefix="apex-gitscan-")
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self.index_copy = os.path.join(self.folder, "index")
        self._copied: StatKey | None = None
        """Stat of the user's index when it was copied; None: not copied yet (or it does not exist)."""

    def close(self) -> None:
        self._finalizer()

    def _sync(self) -> None:
        try:
            info = os.stat(self.user_index)
        except OSError:
            # No index yet (a fresh `git init`): an empty private one lists everything as untracked.
            self._copied = None
            try:
                os.unlink(self.index_copy)
            except OSError:
                pass
            return
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        # A missing copy would read as an empty index (every file untracked): a temp cleaner may have taken it.
        if key == self._copied and os.path.exists(self.index_copy):
            return
        os.makedirs(self.folder, exist_ok=True)
        partial = self.index_copy + ".partial"
        shutil.copyfile(self.user_index, partial)
        os.replace(partial, self.index_copy)
        self._copied = key

    def dirty(self) -> tuple[set[str], dict[str, IndexEntry]]:
        self._sync()
        # Locks stay on: git takes one only on our copy (`<copy>.lock`) to write back the refreshed stat data and
        # the untracked cache.
        env = {**os.environ, "GIT_INDEX_FILE": self.index_copy}
        env.pop("GIT_OPTIONAL_LOCKS", None)
        # No hooks: git runs `post-index-change` after writing an index; our folder holds none.
        raw = subprocess.run(
            ["git", *_OPTIONS, "-c", f"core.hooksPath={self.folder}", "status", "--porcelain=v2", "-z", "--no-renames"],
            cwd=self.root,
            env=env,
            capture_output=True,
            check=True,
        ).stdout
        return parse_porcelain_v2(raw)


def index_entry(mode: bytes, sha: bytes) -> IndexEntry | Literal[False]:
    """The index entry, None for none, False for a symlink or submodule (not a file the scan keeps)."""
    if mode in (b"120000", b"160000"):
        return False
    if mode in (b"100644", b"100755") and sha.strip(b"0"):
        return (sha.decode(), 0o755 if mode == b"100755" else 0o644)
    return None


def parse_porcelain_v2(raw: bytes) -> tuple[set[str], dict[str, IndexEntry]]:
    """Files whose worktree differs from the index (`1`/`2` records with a worktree status), unmerged ones (`u`) and
    untracked ones (`?`); staged-only changes are not dirty: the file equals its index entry."""
    dirty: set[str] = set()
    entries: dict[str, IndexEntry] = {}
    records = raw.split(b"\0")
    position = 0
    while position < len(records):
        record = records[position]
        position += 1
        if not record:
            continue
        kind = record[:1]
        if kind == b"?":
            dirty.add(os.fsdecode(record[2:]))
        elif kind in (b"1", b"2"):
            # 1 XY sub mH mI mW hH hI path; 2 adds a score field and is followed by the original path.
            parts = record.split(b" ", 9 if kind == b"2" else 8)
            if kind == b"2":
                position += 1
            if len(parts) < 9 or parts[1][1:2] == b".":
                continue
            rel = os.fsdecode(parts[-1])
            dirty.add(rel)
            entry = index_entry(parts[4], parts[7])
            if entry is not False:
                entries[rel] = entry
        elif kind == b"u":
            # u XY sub m1 m2 m3 mW h1 h2 h3 path: no stage-0 entry to take old content from.
            parts = record.split(b" ", 10)
            if len(parts) == 11:
                rel = os.fsdecode(parts[10])
                dirty.add(rel)
                if not {b"120000", b"160000"} & set(parts[3:7]):
                    entries[rel] = None
    return dirty, entries


__all__ = ["GitStatusReader", "index_entry", "parse_porcelain_v2"]
