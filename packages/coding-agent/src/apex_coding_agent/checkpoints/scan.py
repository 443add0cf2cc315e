"""What a `bash` command changed in the project: a cheap scan before and after it.

Inside a git repository, git names the candidates (so `.gitignore` is git's own: `git status` over a private index
copy with git's untracked cache at the top of a worktree, see `git_status`; `git diff-files` and `git ls-files` in a
folder below it) and a file that was clean before the command gets its old content from git's object store. Elsewhere a stat walk skips
the usual build and dependency folders and `.gitignore`d paths. Either way, the files that were dirty (or, without
git, all files) are hashed into the blob store before the command once per change of their stat, so their old
content is there when the command rewrites them. Symlinks and other non-regular files are never followed or kept.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass

from apex_coding_agent.checkpoints.blobs import BlobStore, content_hash
from apex_coding_agent.checkpoints.git_status import GitStatusReader, index_entry
from apex_coding_agent.tools.ignore_walk import IgnoreRule, parse_ignore_file

SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "dist", "build", "target", ".next", ".cache", ".gradle", ".idea",
    }
)  # fmt: skip
"""Build output and dependency folders a stat walk never enters."""

RACY_NS = 100_000_000
"""A file modified this close to the 'before' scan may change again without its stat changing (timestamps tick
every few ms on Linux file systems): hash it again."""

MAX_SCAN_FILES = 50_000
"""A plain folder with more files than this is not scanned around `bash` commands (and the turn says so)."""
RETRY_WALK_SECONDS = 300.0
TOO_MANY_FILES = f"more than {MAX_SCAN_FILES:,} files in the project: changes made by bash are not kept"
BASELINE_FULL = "not kept: the content kept ahead of bash commands reached the cap"

StatKey = tuple[int, int, int, int]
"""size, mtime_ns, ctime_ns, inode."""


@dataclass
class Known:
    key: StatKey
    digest: str | None
    """None: not kept (see `reason`)."""
    mode: int
    reason: str = "larger than the file cap"


@dataclass(frozen=True)
class ScanChange:
    path: str
    before: str | None
    """Hash of the old content; None when the file did not exist (or when `unknown` says why it is not kept)."""
    after: str | None
    mode: int | None = None
    unknown: str | None = None
    size: int | None = None


@dataclass
class ScanState:
    started_ns: int
    files: dict[str, StatKey | None]
    """Plain: every file. Git: the dirty ones (None: deleted in the worktree)."""
    index: bytes | None = None
    """Git: a copy of the index file as it was (read only if a file that was clean changed)."""
    index_key: StatKey | None = None
    too_many: bool = False


def _key(info: os.stat_result) -> StatKey:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def _lstat_regular(path: str) -> os.stat_result | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


class ProjectScanner:
    def __init__(
        self,
        root: str,
        store: BlobStore,
        max_file_bytes: int,
        exclude_dir: str | None = None,
        max_baseline_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self.root = os.path.realpath(root)
        self.store = store
        self.max_file_bytes = max_file_bytes
        self.known: dict[str, Known] = {}
        self.max_baseline_bytes = max_baseline_bytes
        """Content stored ahead of commands (files that may be changed, not yet changed) stops at this many bytes."""
        self.baseline_bytes = 0
        self._too_many_until = 0.0
        """A folder found too large is not walked again for a while (each walk would stop at the limit again)."""
        # The agent dir (sessions, the blob store) may sit inside the project: never scan it.
        excluded = os.path.realpath(exclude_dir if exclude_dir is not None else store.root)
        inside = os.path.relpath(excluded, self.root)
        self._excluded_dir = excluded
        self._excluded_prefix = None if inside.startswith("..") else inside.replace(os.sep, "/") + "/"
        self._git: tuple[str, str] | None | bool = False
        """False: not looked up yet; None: not a repository; else (git dir, prefix of the root in the repository)."""
        self._status: GitStatusReader | None = None
        """At the top of a worktree: one `git status` with git's untracked cache in a private index copy."""

    # ----------------------------------------------------------------- shared

    def remember(self, rel: str) -> Known | None:
        """Hash (and keep) the file's current content unless its stat is what we saw last; None when absent."""
        info = _lstat_regular(os.path.join(self.root, rel))
        if info is None:
            self.known.pop(rel, None)
            return None
        key = _key(info)
        known = self.known.get(rel)
        if known is not None and known.key == key:
            return known
        return self._hash(rel, info)

    def _hash(self, rel: str, info: os.stat_result) -> Known:
        digest: str | None = None
        reason = "larger than the file cap"
        if self.baseline_bytes + info.st_size > self.max_baseline_bytes:
            reason = BASELINE_FULL
        elif info.st_size <= self.max_file_bytes:
            try:
                digest = self.store.put_file(os.path.join(self.root, rel))
                previous = self.known.get(rel)
                if previous is None or previous.digest != digest:  # a racy file hashed again is not kept twice
                    self.baseline_bytes += info.st_size
            except OSError as exc:
                reason = f"not kept: {exc.strerror or exc}"
        known = Known(_key(info), digest, stat.S_IMODE(info.st_mode), reason)
        self.known[rel] = known
        return known

    def _git_info(self) -> tuple[str, str] | None:
        if self._git is False:
            self._git = None
            if shutil.which("git") is not None:
                try:
                    out = self._run(["rev-parse", "--git-dir", "--show-prefix"]).decode().splitlines()
                except (OSError, subprocess.CalledProcessError):
                    out = []
                if len(out) >= 1:
                    prefix = out[1] if len(out) > 1 else ""
                    self._git = (os.path.join(self.root, out[0]), prefix)
                    if not prefix:
                        self._status = GitStatusReader(self.root, self._git[0])
        return self._git if isinstance(self._git, tuple) else None

    def _run(self, args: list[str], stdin: bytes | None = None, index_file: str | None = None) -> bytes:
        # Status must not take the index lock from the command; paths are paths, never patterns.
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_LITERAL_PATHSPECS": "1"}
        if index_file is not None:
            env["GIT_INDEX_FILE"] = index_file
        return subprocess.run(
            ["git", *args], cwd=self.root, input=stdin, capture_output=True, check=True, env=env
        ).stdout

    @property
    def uses_git(self) -> bool:
        return self._git_info() is not None

    # ----------------------------------------------------------------- before / after

    def before(self) -> ScanState:
        started = time.time_ns()
        git = self._git_info()
        if git is None:
            if time.monotonic() < self._too_many_until:
                return ScanState(started, {}, too_many=True)
            try:
                files = self._walk()
            except _TooMany:
                self._too_many_until = time.monotonic() + RETRY_WALK_SECONDS
                return ScanState(started, {}, too_many=True)
            for rel, key in files.items():
                known = self.known.get(rel)
                if known is None or known.key != key:
                    info = _lstat_regular(os.path.join(self.root, rel))
                    if info is not None:
                        self._hash(rel, info)
            return ScanState(started, dict(files))
        dirty, _ = self._git_dirty()
        state: dict[str, StatKey | None] = {}
        for rel in dirty:
            known = self.remember(rel)
            state[rel] = known.key if known is not None else None
        index_path = os.path.join(git[0], "index")
        index_key = self._index_key(git[0])
        try:
            with open(index_path, "rb") as handle:
                index = handle.read()
        except OSError:
            index = None
        return ScanState(started, state, index, index_key)

    def after(self, before: ScanState) -> list[ScanChange]:
        git = self._git_info()
        if before.too_many:
            return [ScanChange("*", None, None, unknown=TOO_MANY_FILES)]
        if git is None:
            try:
                now = self._walk()
            except _TooMany:
                return [ScanChange("*", None, None, unknown=TOO_MANY_FILES)]
            candidates = {rel for rel in before.files.keys() | now.keys() if before.files.get(rel) != now.get(rel)}
            candidates.update(rel for rel, key in before.files.items() if key is not None and self._racy(key, before))
            return self._changes(candidates, before, git_before={})
        dirty, entries = self._git_dirty()
        candidates = set(before.files) | dirty
        if self._index_key(git[0]) != before.index_key:
            # A git command moved the index (checkout, reset, commit...): files that are clean now may differ.
            index = self._git_index(before.index)
            live = self._git_index(None)
            candidates.update(rel for rel in index.keys() | live.keys() if index.get(rel) != live.get(rel))
        else:
            # The index did not move: `diff-files` already named the index entry of each newly dirty tracked file;
            # ask git only about the odd ones it reports without one (intent-to-add, unmerged).
            fresh = [rel for rel in candidates if rel not in before.files]
            index = self._git_index(None, [rel for rel in fresh if rel in entries and entries[rel] is None])
            for rel in fresh:
                entry = entries.get(rel)
                if entry is not None:
                    index[rel] = entry
        git_before = {rel: index[rel] for rel in candidates if rel not in before.files and rel in index}
        return self._changes(candidates, before, git_before)

    def _racy(self, key: StatKey, before: ScanState) -> bool:
        return key[1] >= before.started_ns - RACY_NS

    def _changes(
        self, candidates: Iterable[str], before: ScanState, git_before: dict[str, tuple[str, int]]
    ) -> list[ScanChange]:
        old_content = self._git_blobs(sorted({sha for sha, _ in git_before.values()})) if git_before else {}
        changes: list[ScanChange] = []
        for rel in sorted(candidates):
            old_key = before.files.get(rel)
            previous = self.known.get(rel)
            info = _lstat_regular(os.path.join(self.root, rel))
            if old_key is not None and info is not None and _key(info) == old_key and not self._racy(old_key, before):
                continue
            after: str | None = None
            if info is not None:
                now = self._hash(rel, info)
                if now.digest is None:
                    changes.append(ScanChange(rel, None, None, unknown=now.reason, size=info.st_size))
                    continue
                after = now.digest
            else:
                self.known.pop(rel, None)
            change = self._before_of(rel, old_key, previous, git_before, old_content, after)
            if change is not None:
                changes.append(change)
        return changes

    def _before_of(
        self,
        rel: str,
        old_key: StatKey | None,
        known: Known | None,
        git_before: dict[str, tuple[str, int]],
        old_content: dict[str, bytes],
        after: str | None,
    ) -> ScanChange | None:
        if rel in git_before:
            sha, mode = git_before[rel]
            data = old_content.get(sha)
            if data is None:
                return ScanChange(rel, None, after, unknown="not in the git object store")
            if len(data) > self.max_file_bytes:
                return ScanChange(rel, None, after, unknown="larger than the file cap", size=len(data))
            digest = content_hash(data)
            if digest == after:
                return None
            return ScanChange(rel, self.store.put(data), after, mode=mode, size=len(data))
        if old_key is None:
            return None if after is None else ScanChange(rel, None, after)
        if known is None or known.digest is None:
            reason = known.reason if known is not None else "not kept"
            return ScanChange(rel, None, after, unknown=reason, size=old_key[0])
        if known.digest == after:
            return None
        return ScanChange(rel, known.digest, after, mode=known.mode, size=old_key[0])

    # ----------------------------------------------------------------- plain walk

    def _walk(self) -> dict[str, StatKey]:
        out: dict[str, StatKey] = {}
        stack: list[tuple[str, str, list[IgnoreRule]]] = [(self.root, "", [])]
        while stack:
            directory, prefix, rules = stack.pop()
            try:
                with os.scandir(directory) as iterator:
                    entries = list(iterator)
            except OSError:
                continue
            if any(entry.name == ".gitignore" for entry in entries):  # no failed open() per folder
                rules = rules + _gitignore(directory)
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in SKIPPED_DIRS or entry.path == self._excluded_dir:
                            continue
                        if rules and _ignored(rules, entry.path, True):
                            continue
                        stack.append((entry.path, prefix + entry.name + "/", rules))
                    elif entry.is_file(follow_symlinks=False):
                        if rules and _ignored(rules, entry.path, False):
                            continue
                        info = entry.stat(follow_symlinks=False)
                        out[prefix + entry.name] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
                        if len(out) > MAX_SCAN_FILES:
                            raise _TooMany
                except OSError:
                    continue
        return out

    # ----------------------------------------------------------------- git

    @property
    def private_index_folder(self) -> str | None:
        return self._status.folder if self._status is not None else None

    def close(self) -> None:
        """Remove the private index copy (also done when the scanner is collected)."""
        if self._status is not None:
            self._status.close()

    def _git_dirty(self) -> tuple[set[str], dict[str, tuple[str, int] | None]]:
        if self._status is None:
            return self._git_dirty_below()
        try:
            dirty, entries = self._status.dirty()
        except (OSError, subprocess.CalledProcessError):
            # An older git (porcelain v2 and `--no-renames` need 2.18), or the copy cannot be made: list as below.
            self._status.close()
            self._status = None
            return self._git_dirty_below()
        if self._excluded_prefix is not None:
            prefix = self._excluded_prefix
            dirty = {rel for rel in dirty if not rel.startswith(prefix)}
            entries = {rel: entry for rel, entry in entries.items() if not rel.startswith(prefix)}
        return dirty, entries

    def _git_dirty_below(self) -> tuple[set[str], dict[str, tuple[str, int] | None]]:
        """Files below the root that differ from the index (or are unmerged) and untracked files git does not ignore,
        with the index entry (blob id, permission bits) of each dirty tracked file: None when git reports none (an
        unmerged or intent-to-add entry) and nothing for a symlink or submodule entry.

        Used when the root is a folder inside a repository: `git status` would list the whole worktree. The two
        listings run side by side: together they are what `git status` reads, minus comparing the index with HEAD.
        """
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        commands = (
            ["diff-files", "--raw", "-z", "--relative"],
            ["ls-files", "--others", "--exclude-standard", "-z"],
        )
        processes = [
            subprocess.Popen(["git", *args], cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            for args in commands
        ]
        outputs: list[bytes] = []
        for process in processes:
            out, _ = process.communicate()
            if process.returncode != 0:
                raise subprocess.CalledProcessError(process.returncode, process.args)
            outputs.append(out)
        dirty: set[str] = set()
        entries: dict[str, tuple[str, int] | None] = {}
        fields = outputs[0].split(b"\0")
        # `:<index mode> <worktree mode> <index blob> <worktree blob> <status>` then the path (no renames here).
        for meta, path in zip(fields[0:-1:2], fields[1::2], strict=True):
            rel = os.fsdecode(path)
            if self._excluded_prefix is not None and rel.startswith(self._excluded_prefix):
                continue
            dirty.add(rel)
            mode, _, sha = (meta[1:].split(b" ", 3) + [b"", b""])[:3]
            entry = index_entry(mode, sha)
            if entry is not False:
                entries[rel] = entry
        for path in outputs[1].split(b"\0"):
            if not path:
                continue
            rel = os.fsdecode(path)
            if self._excluded_prefix is None or not rel.startswith(self._excluded_prefix):
                dirty.add(rel)
        return dirty, entries

    def _git_index(self, copy: bytes | None, paths: list[str] | None = None) -> dict[str, tuple[str, int]]:
        """Blob ids and permission bits of the index entries (of `paths` only, when given) in `copy` of an index, else the live one."""
        if paths is not None and not paths:
            return {}
        if copy is None:
            raw = self._run(["ls-files", "-s", "-z", "--", *(paths or [])])
        else:
            with tempfile.NamedTemporaryFile(prefix="apex-index-") as handle:
                handle.write(copy)
                handle.flush()
                raw = self._run(["ls-files", "-s", "-z", "--", *(paths or [])], index_file=handle.name)
        out: dict[str, tuple[str, int]] = {}
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            parts = meta.split(b" ")
            if len(parts) == 3 and parts[2] == b"0" and parts[0] != b"160000" and parts[0] != b"120000":
                out[os.fsdecode(path)] = (parts[1].decode(), 0o755 if parts[0] == b"100755" else 0o644)
        return out

    def _index_key(self, git_dir: str) -> StatKey | None:
        try:
            return _key(os.stat(os.path.join(git_dir, "index")))
        except OSError:
            return None

    def _git_blobs(self, shas: list[str]) -> dict[str, bytes]:
        if not shas:
            return {}
        try:
            raw = self._run(["cat-file", "--batch"], stdin="".join(sha + "\n" for sha in shas).encode())
        except (OSError, subprocess.CalledProcessError):
            return {}
        out: dict[str, bytes] = {}
        position = 0
        while position < len(raw):
            end = raw.index(b"\n", position)
            header = raw[position:end].split(b" ")
            position = end + 1
            if len(header) != 3 or header[1] != b"blob":
                continue  # "<sha> missing"
            size = int(header[2])
            out[header[0].decode()] = raw[position : position + size]
            position += size + 1
        return out


class _TooMany(Exception):
    pass


def _gitignore(directory: str) -> list[IgnoreRule]:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            return parse_ignore_file(handle.read(), directory)
    except OSError:
        return []


def _ignored(rules: list[IgnoreRule], path: str, is_dir: bool) -> bool:
    for rule in reversed(rules):
        if rule.matches(path, is_dir):
            return not rule.negated
    return False


__all__ = ["SKIPPED_DIRS", "ProjectScanner", "ScanChange", "ScanState"]
