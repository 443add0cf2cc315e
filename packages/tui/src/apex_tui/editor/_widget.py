"""The main prompt editor: an own flow widget (not `urwid.Edit`) driven by keybinding ids.

Keys go through `route_editor_key`; the editor never compares literal keys. What it does not
handle itself it emits as signals and never touches the session:

- `submit(editor, text)`: the expanded text (paste markers replaced). The app clears the editor with `clear(text)`
  when it takes the submission, or leaves the text in place.
- `action(editor, action_id)`: an `app.*` id (or `extension`) for the app to run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import urwid
from urwid.str_util import calc_width

from apex_tui.editor._complete import CommandInfo, FileIndex, Suggestion, command_suggestions, path_completions
from apex_tui.editor._layout import Row, columns, cursor_row, layout, offset_at_column
from apex_tui.editor._state import History, KillRing, PasteStore, Snapshot, UndoStack, clean_paste
from apex_tui.keybindings import EditorState, KeybindingManager, route_editor_key

_WORD_CHARS = "_"


def _is_word(char: str) -> bool:
    return char.isalnum() or char in _WORD_CHARS


def _printable(key: object) -> bool:
    return isinstance(key, str) and len(key) == 1 and key.isprintable()


class Editor(urwid.Widget):
    """Multi-line prompt editor with history, kill ring, undo, autocomplete and large-paste markers."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = True
    signals = ["submit", "action"]

    def __init__(
        self,
        keymap: KeybindingManager,
        *,
        cwd: Path | None = None,
        commands: Callable[[], Sequence[CommandInfo]] = lambda: (),
        files: FileIndex | None = None,
        max_visible_suggestions: int = 5,
    ) -> None:
        super().__init__()
        self.keymap = keymap
        self.cwd = cwd or Path.cwd()
        self.commands = commands
        self.files = files if files is not None else FileIndex(self.cwd)
        self.max_visible_suggestions = max(3, min(20, max_visible_suggestions))
        self.text = ""
        self.cursor = 0
        self.max_rows = 5
        self.rule_style = "border"
        self.history = History()
        self.kill_ring = KillRing()
        self.undo_stack = UndoStack()
        self.pastes = PasteStore()
        self.suggestions: list[Suggestion] = []
        self.selected = 0
        self._scroll = 0
        self._width = 80
        self._last_action: str | None = None
        self._yank_range: tuple[int, int] | None = None
        self._jump: str | None = None
        self._paste_buffer: list[str] | None = None
        self._dismissed_text: str | None = None

    # ----------------------------------------------------------------- public editing API

    @property
    def autocomplete_open(self) -> bool:
        """Whether the suggestion list is shown."""
        return bool(self.suggestions)

    def set_text(self, text: str, cursor: int | None = None) -> None:
        """Replace the text (undoable); the cursor goes to the end unless given."""
        self._edit("set", text, len(text) if cursor is None else cursor)

    def clear(self, submitted: str | None = None) -> None:
        """Empty the editor (undoable); `submitted` text is added to the history."""
        if submitted is not None:
            self.history.add(submitted)
            self.pastes.clear()
        self._edit("clear", "", 0)
        self.history.reset()

    def insert(self, text: str) -> None:
        """Insert at the cursor (one undo step)."""
        self._edit("insert", self.text[: self.cursor] + text + self.text[self.cursor :], self.cursor + len(text))

    def expanded_text(self) -> str:
        """The text with paste markers replaced by their content."""
        return self.pastes.expand(self.text)

    def close_autocomplete(self) -> None:
        """Hide the suggestion list until the text changes."""
        self.suggestions = []
        self._dismissed_text = self.text
        self._invalidate()

    # ----------------------------------------------------------------- rendering

    def _text_width(self, width: int) -> int:
        # The last column stays free for the cursor after a full row.
        return max(1, width - 1)

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """Rules, visible text rows and the suggestion rows."""
        text_rows = min(len(layout(self.text, self._text_width(size[0]))), self.max_rows)
        return 2 + text_rows + min(len(self.suggestions), self.max_visible_suggestions)

    def render(self, size: tuple[int] | tuple[()] | tuple[int, int], focus: bool = False) -> urwid.Canvas:
        """Top rule, the visible window of text rows around the cursor, bottom rule, suggestions."""
        width = size[0] if size else 80
        self._width = width
        rows = layout(self.text, self._text_width(width))
        current = cursor_row(rows, self.cursor)
        visible = min(len(rows), self.max_rows)
        if current < self._scroll:
            self._scroll = current
        elif current >= self._scroll + visible:
            self._scroll = current - visible + 1
        self._scroll = max(0, min(self._scroll, len(rows) - visible))
        above, below = self._scroll, len(rows) - self._scroll - visible
        lines: list[urwid.Canvas] = [self._rule(width, f" ↑ {above} more " if above else "")]
        lines.extend(
            self._line(self.text[r.start : r.end], width, None) for r in rows[self._scroll : self._scroll + visible]
        )
        lines.append(self._rule(width, f" ↓ {below} more " if below else ""))
        first = self._suggestion_window()
        last = min(len(self.suggestions), first + self.max_visible_suggestions)
        lines.extend(self._suggestion_row(self.suggestions[i], i == self.selected, width) for i in range(first, last))
        canvas = urwid.CanvasCombine([(c, None, False) for c in lines])
        if focus:
            col = min(columns(self.text, rows[current].start, self.cursor), width - 1)
            canvas.cursor = (col, 1 + current - self._scroll)
        return canvas

    def get_cursor_coords(self, size: tuple[int]) -> tuple[int, int]:
        """Where the terminal cursor goes."""
        rows = layout(self.text, self._text_width(size[0]))
        current = cursor_row(rows, self.cursor)
        return min(columns(self.text, rows[current].start, self.cursor), size[0] - 1), 1 + current - self._scroll

    def _rule(self, width: int, label: str) -> urwid.Canvas:
        if label and width > len(label) + 6:
            text = "───" + label + "─" * (width - 3 - calc_width(label, 0, len(label)))
        else:
            text = "─" * width
        return urwid.Text((self.rule_style, text), wrap="clip").render((width,))

    @staticmethod
    def _line(text: str, width: int, style: str | None) -> urwid.Canvas:
        return urwid.Text((style, text) if style else text, wrap="clip").render((width,))

    def _suggestion_window(self) -> int:
        count = self.max_visible_suggestions
        return max(0, min(self.selected - count + 1, len(self.suggestions) - count)) if self.selected >= count else 0

    def _suggestion_row(self, item: Suggestion, selected: bool, width: int) -> urwid.Canvas:
        label = ("→ " if selected else "  ") + item.label
        markup: list[tuple[str, str] | str] = [("accent" if selected else "text", label)]
        if item.description:
            markup.append(("muted", "  " + item.description))
        return urwid.AttrMap(urwid.Text(markup, wrap="ellipsis"), "selected" if selected else None).render((width,))

    # ----------------------------------------------------------------- keys

    def keypress(self, size: tuple[()] | tuple[int] | tuple[int, int], key: str) -> str | None:
        """Apply `key` through the keybindings; returns it when nothing here uses it."""
        if self._paste_buffer is not None:
            self._paste_key(key)
            return None
        if key == "begin paste":
            self._paste_buffer = []
            return None
        if self._jump is not None and _printable(key):
            self._do_jump(key)
            return None
        self._jump = None
        state = EditorState(editor_empty=not self.text, autocomplete_open=self.autocomplete_open)
        action = route_editor_key(self.keymap, key, state)
        if action is None:
            if _printable(key):
                self._type(key)
                return None
            return key
        if action.startswith("app.") or action == "extension":
            urwid.emit_signal(self, "action", self, action)
            return None
        if action.startswith("tui.altScreen."):
            return key
        return None if self._editor_action(action) else key

    def _editor_action(self, action: str) -> bool:
        handlers: dict[str, Callable[[], bool | None]] = {
            "tui.select.cancel": self.close_autocomplete,
            "tui.select.up": lambda: self._move_selection(-1),
            "tui.select.down": lambda: self._move_selection(1),
            "tui.select.confirm": lambda: self._accept_suggestion(submit=True),
            "tui.input.tab": self._tab,
            "tui.editor.undo": self._undo,
            "tui.editor.deleteCharBackward": self._delete_backward,
            "tui.editor.deleteCharForward": self._delete_forward,
            "tui.editor.deleteWordBackward": lambda: self._kill(self._word_start(self.cursor), self.cursor),
            "tui.editor.deleteWordForward": lambda: self._kill(self.cursor, self._word_end(self.cursor)),
            "tui.editor.deleteToLineStart": lambda: self._kill(self._line_start(), self.cursor),
            "tui.editor.deleteToLineEnd": lambda: self._kill(self.cursor, self._line_end()),
            "tui.editor.yank": self._yank,
            "tui.editor.yankPop": self._yank_pop,
            "tui.editor.historyPrevious": self._history_older,
            "tui.editor.historyNext": self._history_newer,
            "tui.editor.cursorLineStart": lambda: self._move(self._line_start()),
            "tui.editor.cursorLineEnd": lambda: self._move(self._line_end()),
            "tui.editor.cursorWordLeft": lambda: self._move(self._word_start(self.cursor)),
            "tui.editor.cursorWordRight": lambda: self._move(self._word_end(self.cursor)),
            "tui.input.newLine": lambda: self._type("\n"),
            "tui.input.submit": self._submit,
            "tui.editor.cursorUp": self._up,
            "tui.editor.cursorDown": self._down,
            "tui.editor.cursorLeft": lambda: self._move(max(0, self.cursor - 1)),
            "tui.editor.cursorRight": lambda: self._move(min(len(self.text), self.cursor + 1)),
            "tui.editor.pageUp": lambda: self._page(-1),
            "tui.editor.pageDown": lambda: self._page(1),
            "tui.editor.jumpForward": lambda: self._set_jump("forward"),
            "tui.editor.jumpBackward": lambda: self._set_jump("backward"),
            "tui.input.copy": lambda: None,
        }
        handler = handlers.get(action)
        if handler is None:
            return False
        kill = action in (
            "tui.editor.deleteWordBackward",
            "tui.editor.deleteWordForward",
            "tui.editor.deleteToLineStart",
            "tui.editor.deleteToLineEnd",
        )
        result = handler()
        if not kill and action not in ("tui.editor.yank", "tui.editor.yankPop"):
            self._last_action = action
        return result is not False

    # ----------------------------------------------------------------- edits

    def _edit(self, kind: str, text: str, cursor: int, char: str = "") -> None:
        if text == self.text and cursor == self.cursor and kind != "set":
            return
        if text != self.text:
            self.undo_stack.record(Snapshot(self.text, self.cursor), kind, char)
        self.text = text
        self.cursor = max(0, min(cursor, len(text)))
        self._after_change()

    def _after_change(self) -> None:
        self._update_suggestions()
        self._invalidate()

    def _type(self, char: str) -> None:
        self._edit("type", self.text[: self.cursor] + char + self.text[self.cursor :], self.cursor + len(char), char)
        self._last_action = "type"

    def _move(self, cursor: int) -> None:
        self.cursor = max(0, min(cursor, len(self.text)))
        self.undo_stack.break_merge()
        self._update_suggestions()
        self._invalidate()

    def _delete_backward(self) -> None:
        if not self.cursor:
            return
        start = self.pastes.marker_ending_at(self.text, self.cursor)
        start = self.cursor - 1 if start is None else start
        self._edit("delete", self.text[:start] + self.text[self.cursor :], start)

    def _delete_forward(self) -> None:
        if self.cursor >= len(self.text):
            return
        end = self.pastes.marker_starting_at(self.text, self.cursor) or self.cursor + 1
        self._edit("delete", self.text[: self.cursor] + self.text[end:], self.cursor)

    def _kill(self, start: int, end: int) -> None:
        if start == end:
            # An empty kill at a line edge removes the line break, as readline does.
            if end < len(self.text) and self.text[end] == "\n" and start == self.cursor:
                end += 1
            elif start > 0 and self.text[start - 1] == "\n" and end == self.cursor:
                start -= 1
            else:
                return
        backward = end == self.cursor and start < self.cursor
        merge = self._last_action == "kill"
        self.kill_ring.kill(self.text[start:end], backward=backward, merge=merge)
        self._edit("kill", self.text[:start] + self.text[end:], start)
        self._last_action = "kill"

    def _yank(self) -> None:
        entry = self.kill_ring.newest()
        if entry is None:
            return
        start = self.cursor
        self._edit("yank", self.text[:start] + entry + self.text[start:], start + len(entry))
        self._yank_range = (start, start + len(entry))
        self._last_action = "yank"

    def _yank_pop(self) -> None:
        if self._last_action != "yank" or self._yank_range is None:
            return
        entry = self.kill_ring.rotate()
        if entry is None:
            return
        start, end = self._yank_range
        self._edit("yank", self.text[:start] + entry + self.text[end:], start + len(entry))
        self._yank_range = (start, start + len(entry))
        self._last_action = "yank"

    def _undo(self) -> None:
        snapshot = self.undo_stack.pop()
        if snapshot is not None:
            self.text, self.cursor = snapshot.text, snapshot.cursor
            self._after_change()

    # ----------------------------------------------------------------- positions

    def _line_start(self) -> int:
        return self.text.rfind("\n", 0, self.cursor) + 1

    def _line_end(self) -> int:
        end = self.text.find("\n", self.cursor)
        return len(self.text) if end < 0 else end

    def _word_start(self, position: int) -> int:
        while position > 0 and self.text[position - 1].isspace():
            position -= 1
        if position > 0 and _is_word(self.text[position - 1]):
            while position > 0 and _is_word(self.text[position - 1]):
                position -= 1
        else:
            while position > 0 and not self.text[position - 1].isspace() and not _is_word(self.text[position - 1]):
                position -= 1
        return position

    def _word_end(self, position: int) -> int:
        size = len(self.text)
        while position < size and self.text[position].isspace():
            position += 1
        if position < size and _is_word(self.text[position]):
            while position < size and _is_word(self.text[position]):
                position += 1
        else:
            while position < size and not self.text[position].isspace() and not _is_word(self.text[position]):
                position += 1
        return position

    def _rows_now(self) -> list[Row]:
        return layout(self.text, self._text_width(self._width))

    def _vertical(self, delta: int) -> bool:
        rows = self._rows_now()
        current = cursor_row(rows, self.cursor)
        target = current + delta
        if not 0 <= target < len(rows):
            return False
        column = columns(self.text, rows[current].start, self.cursor)
        self._move(offset_at_column(self.text, rows[target], column))
        return True

    def _up(self) -> None:
        rows = self._rows_now()
        on_first = cursor_row(rows, self.cursor) == 0
        if on_first and (not self.text or self.history.browsing or self.cursor == 0):
            self._history_older()
        elif on_first:
            self._move(0)
        else:
            self._vertical(-1)

    def _down(self) -> None:
        rows = self._rows_now()
        on_last = cursor_row(rows, self.cursor) == len(rows) - 1
        if on_last and self.history.browsing:
            self._history_newer()
        elif on_last:
            self._move(len(self.text))
        else:
            self._vertical(1)

    def _history_older(self) -> None:
        entry = self.history.older(self.text)
        if entry is not None:
            self._show_history(entry)

    def _history_newer(self) -> None:
        entry = self.history.newer()
        if entry is not None:
            self._show_history(entry)

    def _show_history(self, entry: str) -> None:
        browsing = self.history.index
        # A recalled `/command` keeps the suggestion list closed: open, it would take Up and Down from the history.
        self._dismissed_text = entry
        self._edit("history", entry, len(entry))
        self.history.index = browsing

    def _page(self, direction: int) -> bool:
        rows = self._rows_now()
        if len(rows) <= self.max_rows:
            # Nothing to scroll here: the key falls through to the transcript.
            return False
        for _ in range(max(1, self.max_rows - 1)):
            if not self._vertical(direction):
                break
        return True

    def _set_jump(self, direction: str) -> None:
        self._jump = direction

    def _do_jump(self, char: str) -> None:
        direction, self._jump = self._jump, None
        if direction == "forward":
            found = self.text.find(char, self.cursor + 1)
        else:
            found = self.text.rfind(char, 0, self.cursor)
        if found >= 0:
            self._move(found)

    # ----------------------------------------------------------------- submit and paste

    def _submit(self) -> None:
        if self.cursor > 0 and self.text[self.cursor - 1] == "\\":
            self._edit("type", self.text[: self.cursor - 1] + "\n" + self.text[self.cursor :], self.cursor, "\n")
            return
        urwid.emit_signal(self, "submit", self, self.expanded_text())

    def _paste_key(self, key: str) -> None:
        assert self._paste_buffer is not None
        if key == "end paste":
            text, self._paste_buffer = "".join(self._paste_buffer), None
            self.paste(text)
        elif key in ("enter", "ctrl j", "ctrl m"):
            self._paste_buffer.append("\n")
        elif key == "tab":
            self._paste_buffer.append("\t")
        elif _printable(key):
            self._paste_buffer.append(key)

    def paste(self, text: str) -> None:
        """Insert pasted text: cleaned, and as a marker when large."""
        text = clean_paste(text)
        if not text:
            return
        if PasteStore.is_large(text):
            text = self.pastes.marker(text)
        elif self.cursor and _is_word(self.text[self.cursor - 1]) and text.startswith(("/", "~")):
            # A dropped path right after a word would glue onto it.
            text = " " + text
        self._edit("paste", self.text[: self.cursor] + text + self.text[self.cursor :], self.cursor + len(text))

    # ----------------------------------------------------------------- autocomplete

    def _token_before_cursor(self) -> tuple[int, str]:
        start = self.cursor
        while start > 0 and not self.text[start - 1].isspace():
            start -= 1
        return start, self.text[start : self.cursor]

    def _update_suggestions(self) -> None:
        if self._dismissed_text is not None and self._dismissed_text == self.text:
            return
        self._dismissed_text = None
        before = self.text[: self.cursor]
        suggestions: list[Suggestion] = []
        if before.startswith("/") and not any(c.isspace() for c in before):
            suggestions = command_suggestions(before[1:], self.commands())
        else:
            _start, token = self._token_before_cursor()
            if token.startswith("@"):
                suggestions = self.files.suggestions(token[1:])
        self.suggestions = suggestions
        self.selected = 0

    def _move_selection(self, delta: int) -> None:
        if self.suggestions:
            self.selected = (self.selected + delta) % len(self.suggestions)
            self._invalidate()

    def _tab(self) -> None:
        if self.suggestions:
            self._accept_suggestion(submit=False)
            return
        start, token = self._token_before_cursor()
        found = path_completions(token, self.cwd)
        if len(found) == 1:
            self._replace_token(start, found[0].value, space=not found[0].value.endswith("/"))
        elif found:
            self.suggestions = found
            self.selected = 0
            self._invalidate()

    def _replace_token(self, start: int, value: str, *, space: bool) -> None:
        rest = self.text[self.cursor :]
        addition = value + (" " if space and not rest.startswith(" ") else "")
        self.suggestions = []
        self._edit("complete", self.text[:start] + addition + rest, start + len(addition))
        self.close_autocomplete()

    def _accept_suggestion(self, *, submit: bool) -> None:
        if not self.suggestions:
            return
        item = self.suggestions[self.selected]
        if item.is_command:
            self._replace_token(0, item.value, space=not submit)
            if submit:
                urwid.emit_signal(self, "submit", self, self.expanded_text().rstrip())
            return
        start, _token = self._token_before_cursor()
        is_dir = item.value.rstrip('"').endswith("/")
        self._replace_token(start, item.value, space=not is_dir)
