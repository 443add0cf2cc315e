"""Autocomplete sources: `/` commands at line start, `@` project files, `tab` path completion."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_FILES = 20000
_ALWAYS_SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"})


@dataclass(frozen=True)
class Suggestion:
    """One row of the autocomplete list: what it shows and the text that replaces the typed token."""

    label: str
    value: str
    description: str = ""
    is_command: bool = False


@dataclass(frozen=True)
class CommandInfo:
    """A slash command as autocomplete lists it (`name` without the slash)."""

    name: str
    description: str = ""
    argument_hint: str = ""


def fuzzy_score(query: str, candidate: str) -> int | None:
    """Lower is better; None when `query`'s characters do not appear in order in `candidate` (case-insensitive)."""
    q = query.lower()
    c = candidate.lower()
    if not q:
        return 0
    if c.startswith(q):
        return 0
    found = c.find(q)
    if found >= 0:
        return 10 + found
    position = -1
    gaps = 0
    for char in q:
        nxt = c.find(char, position + 1)
        if nxt < 0:
            return None
        gaps += nxt - position - 1
        position = nxt
    return 100 + gaps


def fuzzy_filter(query: str, items: Iterable[str], limit: int = 50) -> list[str]:
    """The items matching `query`, best first (ties keep shorter, then alphabetical)."""
    scored: list[tuple[int, int, str]] = []
    for item in items:
        score = fuzzy_score(query, item)
        if score is not None:
            scored.append((score, len(item), item))
    scored.sort()
    return [item for _, _, item in scored[:limit]]


def command_suggestions(prefix: str, commands: Sequence[CommandInfo]) -> list[Suggestion]:
    """Commands whose name matches `prefix` (the text after `/`)."""
    by_name = {c.name: c for c in commands}
    names = fuzzy_filter(prefix, by_name)
    result = []
    for name in names:
        info = by_name[name]
        description = info.description + (f"  {info.argument_hint}" if info.argument_hint else "")
        result.append(Suggestion(f"/{name}", f"/{name}", description, is_command=True))
    return result


def _ignore_patterns(root: Path) -> list[str]:
    try:
        lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [line.strip().strip("/") for line in lines if line.strip() and not line.startswith(("#", "!"))]


def _ignored(relative: str, name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) for p in patterns)


def walk_project_files(root: Path, limit: int = MAX_FILES) -> list[str]:
    """Relative paths of files and directories (with a trailing `/`) under `root`, skipping `.gitignore` matches.

    Only the root `.gitignore` is read: enough for `@` suggestions, and it keeps the walk one cheap pass.
    """
    patterns = _ignore_patterns(root)
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        base = os.path.relpath(current, root)
        prefix = "" if base == "." else base + "/"
        dirs[:] = sorted(d for d in dirs if d not in _ALWAYS_SKIPPED and not _ignored(prefix + d, d, patterns))
        found.extend(prefix + d + "/" for d in dirs)
        found.extend(prefix + f for f in sorted(files) if not _ignored(prefix + f, f, patterns))
        if len(found) >= limit:
            return found[:limit]
    return found


class FileIndex:
    """Project paths for `@` completion, walked once on first use (`invalidate` to walk again)."""

    def __init__(self, root: Path, walker: Callable[[Path], list[str]] = walk_project_files) -> None:
        self.root = root
        self._walker = walker
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        """All indexed relative paths."""
        if self._paths is None:
            self._paths = self._walker(self.root)
        return self._paths

    def invalidate(self) -> None:
        """Forget the walk (files changed)."""
        self._paths = None

    def suggestions(self, query: str, limit: int = 20) -> list[Suggestion]:
        """Paths matching `query` fuzzily by file name first, then by whole path."""
        paths = self.paths()
        names = {p: p.rstrip("/").rsplit("/", 1)[-1] for p in paths}
        scored: list[tuple[int, int, str]] = []
        for path in paths:
            score = fuzzy_score(query, names[path])
            if score is None:
                whole = fuzzy_score(query, path)
                if whole is None:
                    continue
                score = 1000 + whole
            scored.append((score, len(path), path))
        scored.sort()
        return [Suggestion(p, "@" + quote_path(p)) for _, _, p in scored[:limit]]


def quote_path(path: str) -> str:
    """Paths with spaces are quoted."""
    return f'"{path}"' if " " in path else path


def path_completions(token: str, cwd: Path) -> list[Suggestion]:
    """`tab` completion of a path token (relative to `cwd`, `~` expanded): entries of its directory by prefix."""
    raw = token.strip('"')
    expanded = os.path.expanduser(raw)
    directory, _, prefix = expanded.rpartition("/")
    shown_dir = raw.rpartition("/")[0]
    base = Path(directory) if directory else Path()
    if not base.is_absolute():
        base = cwd / base
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    result = []
    for entry in entries:
        if not entry.name.startswith(prefix) or (entry.name.startswith(".") and not prefix.startswith(".")):
            continue
        suffix = "/" if entry.is_dir() else ""
        value = (shown_dir + "/" if shown_dir or raw.startswith("/") else "") + entry.name + suffix
        result.append(Suggestion(entry.name + suffix, quote_path(value)))
    return result
