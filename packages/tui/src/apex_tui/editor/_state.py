"""Pure editor state: history, kill ring, undo snapshots and large-paste markers.

No urwid here: these are the parts the editor widget composes, tested without a terminal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HISTORY_LIMIT = 100
PASTE_LINES = 10
PASTE_CHARS = 1000
_TAB = "    "


class History:
    """Submitted prompts, newest first (at most `HISTORY_LIMIT`); a repeat of the newest is not added.

    Browsing: `older(draft)` / `newer()` walk the entries; past the newest, the draft typed before browsing returns.
    """

    def __init__(self, entries: list[str] | None = None) -> None:
        self.entries: list[str] = []
        for entry in reversed(entries or []):
            self.add(entry)
        self.index = -1
        self._draft = ""

    @property
    def browsing(self) -> bool:
        """Whether an entry (not the draft) is shown."""
        return self.index >= 0

    def add(self, text: str) -> None:
        """Record a submitted text (blank texts and repeats of the newest entry are skipped)."""
        if text.strip() and (not self.entries or self.entries[0] != text):
            self.entries.insert(0, text)
            del self.entries[HISTORY_LIMIT:]
        self.reset()

    def reset(self) -> None:
        """Stop browsing."""
        self.index = -1
        self._draft = ""

    def older(self, draft: str) -> str | None:
        """The next older entry, or None at the oldest; `draft` is kept when browsing starts."""
        if self.index + 1 >= len(self.entries):
            return None
        if self.index < 0:
            self._draft = draft
        self.index += 1
        return self.entries[self.index]

    def newer(self) -> str | None:
        """The next newer entry, the saved draft past the newest, or None when not browsing."""
        if self.index < 0:
            return None
        self.index -= 1
        if self.index < 0:
            draft, self._draft = self._draft, ""
            return draft
        return self.entries[self.index]


class KillRing:
    """Killed texts, newest last. Consecutive kills merge: backward kills prepend, forward kills append."""

    def __init__(self) -> None:
        self.entries: list[str] = []

    def kill(self, text: str, *, backward: bool, merge: bool) -> None:
        """Push `text`, or merge it into the newest entry when the previous action was a kill."""
        if not text:
            return
        if merge and self.entries:
            self.entries[-1] = text + self.entries[-1] if backward else self.entries[-1] + text
        else:
            self.entries.append(text)

    def newest(self) -> str | None:
        """What `yank` inserts."""
        return self.entries[-1] if self.entries else None

    def rotate(self) -> str | None:
        """Move the newest entry to the oldest slot and return the new newest (for `yankPop`)."""
        if len(self.entries) < 2:
            return self.newest()
        self.entries.insert(0, self.entries.pop())
        return self.entries[-1]


@dataclass(frozen=True)
class Snapshot:
    """Editor text and cursor offset before an edit."""

    text: str
    cursor: int


@dataclass
class UndoStack:
    """Snapshots before edits; typed characters merge into one snapshot per word."""

    snapshots: list[Snapshot] = field(default_factory=list)
    _last_kind: str | None = None

    def record(self, snapshot: Snapshot, kind: str, char: str = "") -> None:
        """Save `snapshot` before an edit of `kind`; a typed non-space char right after typing merges."""
        # A word and the spaces after it are one step; the next word starts a new one.
        space = char.isspace()
        merge = kind == "type" and (self._last_kind == "type" or (self._last_kind == "type-space" and space))
        if not merge:
            self.snapshots.append(snapshot)
            del self.snapshots[:-200]
        self._last_kind = "type-space" if kind == "type" and space else kind

    def break_merge(self) -> None:
        """A cursor move ends the current word's snapshot."""
        self._last_kind = None

    def pop(self) -> Snapshot | None:
        """The snapshot to restore, or None when there is nothing to undo."""
        self._last_kind = None
        return self.snapshots.pop() if self.snapshots else None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_paste(text: str) -> str:
    """CRLF normalised, tabs expanded, control characters dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", _TAB)
    return _CONTROL.sub("", text)


class PasteStore:
    """Large pastes stand in the editor as atomic markers `[paste #N +L lines]` / `[paste #N C chars]`."""

    _MARKER = re.compile(r"\[paste #(\d+) (?:\+\d+ lines|\d+ chars)\]")

    def __init__(self) -> None:
        self.pastes: dict[int, str] = {}
        self._next = 1

    @staticmethod
    def is_large(text: str) -> bool:
        """More than `PASTE_LINES` lines or `PASTE_CHARS` characters."""
        return text.count("\n") + 1 > PASTE_LINES or len(text) > PASTE_CHARS

    def marker(self, text: str) -> str:
        """Store `text` and return its marker."""
        number = self._next
        self._next += 1
        self.pastes[number] = text
        lines = text.count("\n") + 1
        return f"[paste #{number} +{lines} lines]" if lines > PASTE_LINES else f"[paste #{number} {len(text)} chars]"

    def expand(self, text: str) -> str:
        """`text` with every known marker replaced by its paste."""

        def replace(match: re.Match[str]) -> str:
            return self.pastes.get(int(match.group(1)), match.group(0))

        return self._MARKER.sub(replace, text)

    def marker_ending_at(self, text: str, offset: int) -> int | None:
        """Start offset of a known marker ending exactly at `offset` (markers are deleted whole)."""
        for match in self._MARKER.finditer(text, 0, offset):
            if match.end() == offset and int(match.group(1)) in self.pastes:
                return match.start()
        return None

    def marker_starting_at(self, text: str, offset: int) -> int | None:
        """End offset of a known marker starting exactly at `offset`."""
        match = self._MARKER.match(text, offset)
        if match and int(match.group(1)) in self.pastes:
            return match.end()
        return None

    def clear(self) -> None:
        """Forget the pastes (after a submit)."""
        self.pastes.clear()
