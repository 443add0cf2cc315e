"""A filterable selection list that temporarily replaces the editor: model, thinking, trust, approval.

Keys come through the keybindings (`tui.select.*`, `tui.editor.deleteCharBackward` for the query); typing filters
fuzzily when `filterable`. The picker emits `select(picker, value)` and `cancel(picker)`; the app swaps it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import urwid

from apex_tui.editor import fuzzy_score
from apex_tui.keybindings import KeybindingManager

VISIBLE_ROWS = 10


@dataclass(frozen=True)
class Choice:
    """One row: the shown label, an optional dim description, and the value reported on select."""

    label: str
    # Any: a picker carries whatever its owner selects (a Model, a level name, a trust choice).
    value: Any
    description: str = ""


class Picker(urwid.Widget):
    """Title, optional query line, and up to `VISIBLE_ROWS` choices around the selection."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = True
    signals = ["select", "cancel", "key"]

    def __init__(
        self,
        keymap: KeybindingManager,
        title: str,
        choices: Sequence[Choice],
        *,
        filterable: bool = True,
        query: str = "",
        selected: int = 0,
        hint: str = "",
    ) -> None:
        super().__init__()
        self.keymap = keymap
        self.title = title
        self.all_choices = list(choices)
        self.filterable = filterable
        self.query = query
        self.hint = hint
        self.visible: list[Choice] = []
        self._apply_filter()
        self.selected = max(0, min(selected, len(self.visible) - 1))

    def _apply_filter(self) -> None:
        if not self.query:
            self.visible = list(self.all_choices)
        else:
            scored = []
            for index, choice in enumerate(self.all_choices):
                score = fuzzy_score(self.query, choice.label)
                if score is not None:
                    scored.append((score, index, choice))
            scored.sort(key=lambda item: (item[0], item[1]))
            self.visible = [choice for _, _, choice in scored]
        self.selected = 0
        self._invalidate()

    @property
    def current(self) -> Choice | None:
        """The highlighted choice."""
        return self.visible[self.selected] if self.visible else None

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """Title lines, query, choices, hint."""
        return len(self._lines(size[0]))

    def render(self, size: tuple[()] | tuple[int] | tuple[int, int], focus: bool = False) -> urwid.Canvas:
        """The picker at this width, framed by rules like the editor."""
        width = size[0] if size else 80
        canvases = [urwid.Text(markup, wrap="ellipsis").render((width,)) for markup in self._lines(width)]
        return urwid.CanvasCombine([(c, None, False) for c in canvases])

    def _lines(self, width: int) -> list[Any]:
        # Any: urwid text markup (str, (style, text) or lists of those).
        lines: list[Any] = [("border", "─" * width)]
        lines.extend(("accent", line) for line in self.title.split("\n"))
        if self.filterable:
            lines.append([("muted", "> "), self.query])
        start = max(0, min(self.selected - VISIBLE_ROWS // 2, len(self.visible) - VISIBLE_ROWS))
        for index in range(start, min(len(self.visible), start + VISIBLE_ROWS)):
            choice = self.visible[index]
            chosen = index == self.selected
            row: list[Any] = [("accent" if chosen else "text", ("→ " if chosen else "  ") + choice.label)]
            if choice.description:
                row.append(("muted", "  " + choice.description))
            lines.append(row)
        if not self.visible:
            lines.append(("muted", "  No matches"))
        if self.hint:
            lines.append(("dim", self.hint))
        lines.append(("border", "─" * width))
        return lines

    def keypress(self, size: tuple[()] | tuple[int] | tuple[int, int], key: str) -> str | None:
        """Move, confirm, cancel, or edit the query."""
        keymap = self.keymap
        if keymap.matches(key, "tui.select.cancel"):
            urwid.emit_signal(self, "cancel", self)
        elif keymap.matches(key, "tui.select.confirm"):
            if self.current is not None:
                urwid.emit_signal(self, "select", self, self.current.value)
        elif keymap.matches(key, "tui.select.up"):
            self._move(-1)
        elif keymap.matches(key, "tui.select.down"):
            self._move(1)
        elif keymap.matches(key, "tui.select.pageUp"):
            self._move(-VISIBLE_ROWS)
        elif keymap.matches(key, "tui.select.pageDown"):
            self._move(VISIBLE_ROWS)
        elif self.filterable and keymap.matches(key, "tui.editor.deleteCharBackward"):
            if self.query:
                self.query = self.query[:-1]
                self._apply_filter()
        elif self.filterable and len(key) == 1 and key.isprintable():
            self.query += key
            self._apply_filter()
        else:
            urwid.emit_signal(self, "key", self, key)
        return None

    def _move(self, delta: int) -> None:
        if self.visible:
            self.selected = max(0, min(len(self.visible) - 1, self.selected + delta))
            self._invalidate()
