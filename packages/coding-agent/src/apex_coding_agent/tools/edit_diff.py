"""Matching and applying `edit` replacements, and the diffs shown for them.

All functions work on LF text; callers strip the BOM and normalize line endings first and restore them afterwards.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from apex_agent.tools import ToolExecutionError
from apex_coding_agent.tools.path_utils import resolve_to_cwd

BOM = "\ufeff"
DIFF_CONTEXT_LINES = 4

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010-\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


@dataclass(frozen=True)
class Edit:
    old_text: str
    new_text: str


def detect_line_ending(content: str) -> str:
    """`\\r\\n` when the first line break is CRLF, else `\\n`."""
    crlf = content.find("\r\n")
    lf = content.find("\n")
    if crlf != -1 and crlf + 1 == lf:
        return "\r\n"
    return "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(text: str) -> tuple[str, str]:
    """`(bom, rest)` where `bom` is the leading U+FEFF or empty."""
    if text.startswith(BOM):
        return BOM, text[1:]
    return "", text


def normalize_for_fuzzy_match(text: str) -> str:
    """Fold the differences models typically get wrong: unicode forms, trailing spaces, smart quotes, dashes, spaces.

    The line count never changes, so line N of the result corresponds to line N of the input.
    """
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(frozen=True)
class _Match:
    index: int
    start: int
    end: int
    new_text: str


def _not_found(path: str, index: int, multi: bool) -> ToolExecutionError:
    if multi:
        return ToolExecutionError(
            f"Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace "
            "and newlines."
        )
    return ToolExecutionError(
        f"Could not find the exact text in {path}. The old text must match exactly including all whitespace "
        "and newlines."
    )


def _not_unique(path: str, index: int, count: int, multi: bool) -> ToolExecutionError:
    if multi:
        return ToolExecutionError(
            f"Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. "
            "Please provide more context to make it unique."
        )
    return ToolExecutionError(
        f"Found {count} occurrences of the text in {path}. The text must be unique. "
        "Please provide more context to make it unique."
    )


def apply_edits(content: str, edits: list[Edit], path: str) -> str:
    """Apply all `edits` (matched against the original `content`) and return the new LF text.

    Raises `ToolExecutionError` with the user-facing messages for empty, missing, ambiguous, overlapping or no-op
    edits.
    """
    multi = len(edits) > 1
    edits = [Edit(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    for index, edit in enumerate(edits):
        if edit.old_text == "":
            prefix = f"edits[{index}].oldText" if multi else "oldText"
            raise ToolExecutionError(f"{prefix} must not be empty in {path}.")

    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_mode = any(edit.old_text not in content for edit in edits)
    haystack = fuzzy_content if fuzzy_mode else content
    matches: list[_Match] = []
    for index, edit in enumerate(edits):
        fuzzy_old = normalize_for_fuzzy_match(edit.old_text)
        needle = fuzzy_old if fuzzy_mode else edit.old_text
        start = haystack.find(needle)
        if start == -1:
            raise _not_found(path, index, multi)
        count = fuzzy_content.count(fuzzy_old)
        if count > 1:
            raise _not_unique(path, index, count, multi)
        matches.append(_Match(index, start, start + len(needle), edit.new_text))

    matches.sort(key=lambda m: m.start)
    for previous, current in zip(matches, matches[1:], strict=False):
        if current.start < previous.end:
            raise ToolExecutionError(
                f"edits[{previous.index}] and edits[{current.index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )

    if fuzzy_mode:
        result = _apply_fuzzy(content, fuzzy_content, matches)
    else:
        result = content
        for match in reversed(matches):
            result = result[: match.start] + match.new_text + result[match.end :]

    if result == content:
        if multi:
            raise ToolExecutionError(f"No changes made to {path}. The replacements produced identical content.")
        raise ToolExecutionError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate an issue "
            "with special characters or the text not existing as expected."
        )
    return result


def _apply_fuzzy(content: str, fuzzy: str, matches: list[_Match]) -> str:
    """Rewrite only the lines the matches touch (from the fuzzy text); copy every other line untouched."""
    original_lines = content.split("\n")
    line_starts = [0]
    for position, char in enumerate(fuzzy):
        if char == "\n":
            line_starts.append(position + 1)

    def line_of(offset: int) -> int:
        low, high = 0, len(line_starts) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if line_starts[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low

    # Group matches whose whole-line regions share a line, so each region is rewritten once.
    groups: list[tuple[int, int, list[_Match]]] = []
    for match in matches:
        first = line_of(match.start)
        last = line_of(match.end - 1)
        if groups and first <= groups[-1][1]:
            group_first, group_last, members = groups[-1]
            groups[-1] = (group_first, max(group_last, last), [*members, match])
        else:
            groups.append((first, last, [match]))

    result_lines = list(original_lines)
    for first, last, members in reversed(groups):
        region_start = line_starts[first]
        region_end = line_starts[last + 1] - 1 if last + 1 < len(line_starts) else len(fuzzy)
        region = fuzzy[region_start:region_end]
        for match in reversed(members):
            local_start = match.start - region_start
            local_end = match.end - region_start
            region = region[:local_start] + match.new_text + region[local_end:]
        result_lines[first : last + 1] = region.split("\n")
    return "\n".join(result_lines)


def _split_keepends(text: str) -> list[str]:
    return text.splitlines(keepends=True) if text else []


def generate_diff_string(old: str, new: str, context_lines: int = DIFF_CONTEXT_LINES) -> tuple[str, int | None]:
    """The numbered display diff and the new-file line number of the first change (None when equal)."""
    old_lines = _split_keepends(old)
    new_lines = _split_keepends(new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    pad = " " * width
    import difflib  # imported here: only a successful edit needs a diff, and most runs make none

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    parts: list[tuple[str, list[str]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(("equal", old_lines[i1:i2]))
            continue
        if i2 > i1:
            parts.append(("delete", old_lines[i1:i2]))
        if j2 > j1:
            parts.append(("insert", new_lines[j1:j2]))

    output: list[str] = []
    old_num = new_num = 1
    first_changed: int | None = None
    last_was_change = False
    for position, (kind, raw_lines) in enumerate(parts):
        lines = [line.rstrip("\n") for line in raw_lines]
        if kind != "equal":
            if first_changed is None:
                first_changed = new_num
            for line in lines:
                if kind == "insert":
                    output.append(f"+{str(new_num).rjust(width)} {line}")
                    new_num += 1
                else:
                    output.append(f"-{str(old_num).rjust(width)} {line}")
                    old_num += 1
            last_was_change = True
            continue
        next_is_change = position + 1 < len(parts)
        shown: list[int | None] = []  # indices into `lines`, None for the "..." marker
        count = len(lines)
        if last_was_change and next_is_change:
            if count <= context_lines * 2:
                shown = list(range(count))
            else:
                shown = [*range(context_lines), None, *range(count - context_lines, count)]
        elif last_was_change:
            shown = list(range(min(context_lines, count)))
            if count > context_lines:
                shown.append(None)
        elif next_is_change:
            skipped = max(0, count - context_lines)
            shown = ([None] if skipped else []) + list(range(skipped, count))
        for index in shown:
            if index is None:
                output.append(f" {pad} ...")
            else:
                output.append(f" {str(old_num + index).rjust(width)} {lines[index]}")
        old_num += count
        new_num += count
        last_was_change = False
    return "\n".join(output), first_changed


def generate_patch(old: str, new: str, path: str, context_lines: int = DIFF_CONTEXT_LINES) -> str:
    """A unified diff of `old` → `new` with jsdiff conventions (always-counted hunk headers, no-newline markers)."""
    old_lines = _split_keepends(old)
    new_lines = _split_keepends(new)
    out = [f"--- {path}", f"+++ {path}"]
    import difflib  # see generate_diff_string

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)

    def emit(mark: str, line: str) -> None:
        if line.endswith("\n"):
            out.append(mark + line[:-1])
        else:
            out.append(mark + line)
            out.append("\\ No newline at end of file")

    for group in matcher.get_grouped_opcodes(context_lines):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        out.append(f"@@ -{old_start},{i2 - i1} +{new_start},{j2 - j1} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for line in old_lines[a1:a2]:
                    emit(" ", line)
                continue
            for line in old_lines[a1:a2]:
                emit("-", line)
            for line in new_lines[b1:b2]:
                emit("+", line)
    return "\n".join(out) + "\n"


def preview_edit_diff(cwd: str, path: str, pairs: Sequence[tuple[str, str]], max_bytes: int) -> str | None:
    """The display diff `edit` would report for replacing each `(old, new)` of `pairs` in `path` as the file is now;
    None when the file is over `max_bytes`, cannot be read, or an edit would not apply (the tool then says why)."""
    try:
        absolute = resolve_to_cwd(path, cwd)
        if os.path.getsize(absolute) > max_bytes:
            return None
        with open(absolute, "rb") as handle:
            raw = handle.read()
        original = normalize_to_lf(strip_bom(raw.decode("utf-8", "replace"))[1])
        updated = apply_edits(original, [Edit(old, new) for old, new in pairs], path)
    except Exception:  # unreadable file, an edit that does not apply: the tool's result will say why
        return None
    return generate_diff_string(original, updated)[0]


__all__ = [
    "BOM",
    "Edit",
    "apply_edits",
    "detect_line_ending",
    "generate_diff_string",
    "generate_patch",
    "normalize_for_fuzzy_match",
    "normalize_to_lf",
    "preview_edit_diff",
    "restore_line_endings",
    "strip_bom",
]
