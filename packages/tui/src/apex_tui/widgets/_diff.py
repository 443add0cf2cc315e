"""Edit diffs for display: built from `edit` arguments, or taken from the tool's `details.diff`.

Display lines have the tool's form ("Display diff"): `<mark><num> <text>` where mark is `+`, `-` or a space.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from apex_tui.widgets._canvas import Markup


def edits_from_args(args: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The (oldText, newText) pairs of `edit` arguments, or None while they are incomplete or malformed.

    Accepts `edits: [{oldText, newText}]` and the legacy top-level `oldText`/`newText` (the edit tool's `prepare_arguments`).
    """
    pairs: list[tuple[str, str]] = []
    edits = args.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if not isinstance(edit, Mapping):
                return None
            old, new = edit.get("oldText"), edit.get("newText")
            if not isinstance(old, str) or not isinstance(new, str):
                return None
            pairs.append((old, new))
    old, new = args.get("oldText"), args.get("newText")
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    return pairs or None


def diff_from_edits(pairs: list[tuple[str, str]]) -> str:
    """A display diff of each replacement on its own, numbered from 1 within the replaced text.

    The real line numbers need the file; the tool's `details.diff` replaces this once the result arrives.
    """
    out: list[str] = []
    for index, (old, new) in enumerate(pairs):
        if index:
            out.append("   ...")
        old_lines, new_lines = old.split("\n"), new.split("\n")
        width = len(str(max(len(old_lines), len(new_lines))))
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out.extend(f" {str(i1 + k + 1).rjust(width)} {line}" for k, line in enumerate(old_lines[i1:i2]))
                continue
            out.extend(f"-{str(i1 + k + 1).rjust(width)} {line}" for k, line in enumerate(old_lines[i1:i2]))
            out.extend(f"+{str(j1 + k + 1).rjust(width)} {line}" for k, line in enumerate(new_lines[j1:j2]))
    return "\n".join(out)


def diff_counts(diff: str) -> tuple[int, int]:
    """(added, removed) line counts of a display diff."""
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def diff_markup(diff: str, max_lines: int) -> tuple[list[Markup], int]:
    """Styled lines of a display diff (at most `max_lines`) and how many lines were left out."""
    lines = diff.split("\n")
    hidden = max(0, len(lines) - max_lines)
    out: list[Markup] = []
    for index, line in enumerate(lines[:max_lines]):
        if index:
            out.append("\n")
        if line.startswith("+"):
            out.append(("toolDiffAdded", line))
        elif line.startswith("-"):
            out.append(("toolDiffRemoved", line))
        else:
            out.append(("toolDiffContext", line))
    return out, hidden
