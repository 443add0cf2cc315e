"""Resolving model-supplied paths against a tool's working directory."""

from __future__ import annotations

import os
import re
import unicodedata

# Spaces a model (or a macOS screenshot name) may use where a plain space is meant.
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NBSP = "\u202f"


def expand_path(path: str) -> str:
    """Strip one leading `@`, turn unicode spaces into plain spaces and expand `~` / `~/`."""
    if path.startswith("@"):
        path = path[1:]
    path = _UNICODE_SPACES.sub(" ", path)
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), path[2:])
    return path


def resolve_to_cwd(path: str, cwd: str) -> str:
    """Absolute, normalized form of `path`; relative paths are taken from `cwd`."""
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return os.path.normpath(expanded)
    return os.path.normpath(os.path.join(cwd, expanded))


def _am_pm_variant(path: str) -> str:
    return re.sub(r" (AM|PM)\.", _NARROW_NBSP + r"\1.", path)


def resolve_read_path(path: str, cwd: str) -> str:
    """Like `resolve_to_cwd`, then try spelling variants when the file does not exist.

    Tried in order: narrow no-break space before AM/PM, NFD normalization, curly apostrophe, NFD + curly apostrophe.
    The first existing candidate wins; otherwise the plain resolution is returned.
    """
    resolved = resolve_to_cwd(path, cwd)
    if os.path.exists(resolved):
        return resolved
    nfd = unicodedata.normalize("NFD", resolved)
    candidates = [
        _am_pm_variant(resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ]
    for candidate in candidates:
        if candidate != resolved and os.path.exists(candidate):
            return candidate
    return resolved


__all__ = ["expand_path", "resolve_read_path", "resolve_to_cwd"]
