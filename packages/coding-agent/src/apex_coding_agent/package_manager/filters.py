"""Path patterns shared by manifests and settings filters.

A pattern list narrows a set of candidate resource paths of one package:
- plain entries (paths or globs) include what they match; with no plain entry everything is included;
- `!glob` excludes what it matches;
- `+path` forces one exact path back in (even past a `!glob`); `-path` forces one exact path out (wins over `+`).

A glob matches a candidate by its path relative to the package root, its file name, or its absolute path. A
`SKILL.md` also matches through its directory (so `!skills/old` drops `skills/old/SKILL.md`), and any path under a
matched directory matches.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

SKILL_FILE = "SKILL.md"


def _names(path: Path, root: Path) -> list[str]:
    """The strings a pattern may match for `path`: relative path, name, absolute path (and the skill dir's)."""
    rel = Path(os.path.relpath(path, root)).as_posix()
    out = [rel, path.name, path.as_posix()]
    if path.name == SKILL_FILE:
        parent = path.parent
        out += [Path(os.path.relpath(parent, root)).as_posix(), parent.name, parent.as_posix()]
    return out


def _normalize(pattern: str) -> str:
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/") or pattern


def matches_glob(path: Path, pattern: str, root: Path) -> bool:
    """`pattern` matches `path` itself or one of its parent directories (relative to `root`)."""
    pat = _normalize(pattern)
    names = _names(path, root)
    if any(fnmatch.fnmatchcase(name, pat) for name in names):
        return True
    rel = names[0]
    # A directory pattern covers everything below it: `extensions/tools` covers `extensions/tools/x.py`.
    parts = rel.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), pat) for i in range(1, len(parts)))


def matches_exact(path: Path, pattern: str, root: Path) -> bool:
    pat = _normalize(pattern)
    return pat in _names(path, root)[:1] + [path.as_posix()] or (
        path.name == SKILL_FILE and pat in (Path(os.path.relpath(path.parent, root)).as_posix(), path.parent.as_posix())
    )


def apply_patterns(candidates: Iterable[Path], patterns: Sequence[str] | None, root: Path) -> list[Path]:
    """The candidates the pattern list keeps, in candidate order (see the module docstring)."""
    items = list(candidates)
    if patterns is None:
        return items
    includes = [p for p in patterns if not p.startswith(("!", "+", "-"))]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_in = [p[1:] for p in patterns if p.startswith("+")]
    force_out = [p[1:] for p in patterns if p.startswith("-")]
    if not patterns:
        return []
    kept: list[Path] = []
    for path in items:
        enabled = not includes or any(matches_glob(path, p, root) for p in includes)
        if enabled and any(matches_glob(path, p, root) for p in excludes):
            enabled = False
        if any(matches_exact(path, p, root) for p in force_in):
            enabled = True
        if any(matches_exact(path, p, root) for p in force_out):
            enabled = False
        if enabled:
            kept.append(path)
    return kept


__all__ = ["apply_patterns", "matches_exact", "matches_glob"]
