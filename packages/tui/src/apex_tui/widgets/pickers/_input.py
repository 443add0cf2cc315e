"""A one-line text buffer with a cursor, edited through keybinding ids (the query line of every picker)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from urwid.str_util import calc_width

from apex_tui.widgets.transcript import KeyMatcher

#: Editing ids a single-line input understands ("also used by other text inputs").
EDIT_IDS: Final[tuple[str, ...]] = (
    "tui.editor.cursorLeft",
    "tui.editor.cursorRight",
    "tui.editor.cursorWordLeft",
    "tui.editor.cursorWordRight",
    "tui.editor.cursorLineStart",
    "tui.editor.cursorLineEnd",
    "tui.editor.deleteCharBackward",
    "tui.editor.deleteCharForward",
    "tui.editor.deleteWordBackward",
    "tui.editor.deleteWordForward",
    "tui.editor.deleteToLineStart",
    "tui.editor.deleteToLineEnd",
)


def is_printable(key: str) -> bool:
    """True for a key that types one character (urwid reports those as the character itself)."""
    return len(key) == 1 and key.isprintable()


class LineInput:
    """Text plus cursor position (in characters). `masked` shows every character as `*` (API keys)."""

    def __init__(self, text: str = "", *, masked: bool = False) -> None:
        self.text = text
        self.cursor = len(text)
        self.masked = masked

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.text = text
        self.cursor = len(text)

    def insert(self, chars: str) -> None:
        """Type `chars` at the cursor."""
        self.text = self.text[: self.cursor] + chars + self.text[self.cursor :]
        self.cursor += len(chars)

    def handle_key(self, keymap: KeyMatcher, key: str, ids: Collection[str] = EDIT_IDS) -> bool:
        """Apply `key` if it is printable or bound to one of `ids`; False when it means nothing here."""
        for action in ids:
            if keymap.matches(key, action):
                self._apply(action)
                return True
        if is_printable(key):
            self.insert(key)
            return True
        return False

    def _apply(self, action: str) -> None:
        text, cursor = self.text, self.cursor
        match action:
            case "tui.editor.cursorLeft":
                self.cursor = max(0, cursor - 1)
            case "tui.editor.cursorRight":
                self.cursor = min(len(text), cursor + 1)
            case "tui.editor.cursorWordLeft":
                self.cursor = _word_start(text, cursor)
            case "tui.editor.cursorWordRight":
                self.cursor = _word_end(text, cursor)
            case "tui.editor.cursorLineStart":
                self.cursor = 0
            case "tui.editor.cursorLineEnd":
                self.cursor = len(text)
            case "tui.editor.deleteCharBackward" if cursor > 0:
                self.text = text[: cursor - 1] + text[cursor:]
                self.cursor = cursor - 1
            case "tui.editor.deleteCharForward":
                self.text = text[:cursor] + text[cursor + 1 :]
            case "tui.editor.deleteWordBackward":
                start = _word_start(text, cursor)
                self.text = text[:start] + text[cursor:]
                self.cursor = start
            case "tui.editor.deleteWordForward":
                self.text = text[:cursor] + text[_word_end(text, cursor) :]
            case "tui.editor.deleteToLineStart":
                self.text = text[cursor:]
                self.cursor = 0
            case "tui.editor.deleteToLineEnd":
                self.text = text[:cursor]

    def shown(self) -> str:
        """The text as displayed."""
        return "*" * len(self.text) if self.masked else self.text

    def cursor_column(self) -> int:
        """Display column of the cursor within `shown()`."""
        return calc_width(self.shown()[: self.cursor], 0, len(self.shown()[: self.cursor]))


def _word_start(text: str, cursor: int) -> int:
    index = cursor
    while index > 0 and text[index - 1].isspace():
        index -= 1
    while index > 0 and not text[index - 1].isspace():
        index -= 1
    return index


def _word_end(text: str, cursor: int) -> int:
    index = cursor
    while index < len(text) and text[index].isspace():
        index += 1
    while index < len(text) and not text[index].isspace():
        index += 1
    return index
