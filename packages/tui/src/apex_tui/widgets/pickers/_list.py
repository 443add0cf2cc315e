"""The generic filterable select list (`tui.select.*` keys, fuzzy query, paging) and its cursor arithmetic."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from apex_tui.widgets._canvas import Markup, Size
from apex_tui.widgets.pickers._base import Frame, PickerBase, rule, text_width
from apex_tui.widgets.pickers._fuzzy import fuzzy_filter
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.transcript import KeyMatcher

T = TypeVar("T")

SELECT_MARK = "› "
NO_MARK = "  "
SELECT_IDS = (
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
)
"""The keys of every list: move, page, confirm, cancel."""


class ListCursor:
    """A highlighted index over `count` rows with a window of `visible` rows around it.

    Up/down wrap around the ends (as in the original's lists); page moves clamp. The window keeps the
    highlighted row near its middle, so a frame only ever builds `visible` rows.
    """

    def __init__(self, visible: int = 10) -> None:
        self.index = 0
        self.count = 0
        self.visible = max(1, visible)

    def reset(self, count: int, index: int = 0) -> None:
        """New row count; the index clamped into it."""
        self.count = count
        self.index = max(0, min(index, count - 1))

    def move(self, delta: int, *, wrap: bool) -> None:
        """Move by `delta` rows, wrapping around or clamping at the ends."""
        if self.count == 0:
            return
        if wrap:
            self.index = (self.index + delta) % self.count
        else:
            self.index = max(0, min(self.index + delta, self.count - 1))

    def page(self, direction: int) -> None:
        """One window of rows up (-1) or down (+1)."""
        self.move(direction * self.visible, wrap=False)

    def window(self) -> range:
        """Positions of the rows on screen."""
        start = max(0, min(self.index - self.visible // 2, self.count - self.visible))
        return range(start, min(start + self.visible, self.count))

    def position_label(self) -> str:
        """`(i/n)`, 1-based; `(0/0)` when empty."""
        return f"({self.index + 1 if self.count else 0}/{self.count})"


@dataclass(frozen=True)
class SelectItem(Generic[T]):
    """One row: the value returned on confirm, its label, a muted description, and the text to search
    (`search_text`; when empty, the label and description)."""

    value: T
    label: str
    description: str = ""
    search_text: str = ""
    disabled: bool = False

    def haystack(self) -> str:
        """Text the query is matched against."""
        return self.search_text or " ".join(part for part in (self.label, self.description) if part)


class SelectList(PickerBase, Generic[T]):
    """A list of `SelectItem`s with an optional fuzzy query line.

    Keys: `tui.select.up/down` (wrap), `tui.select.pageUp/pageDown`, `tui.select.confirm` emits `select` with the
    item's value (disabled items emit nothing), `tui.select.cancel` emits `cancel`. With `filterable`, printable
    keys and the single-line editing ids edit the query and the list is re-filtered (best match first).
    Subclasses add keys through `handle_extra_key` (consulted before the list keys).

    Signals (callback arguments `(widget, payload)`): `select` (value), `cancel` (None), `highlight` (value or
    None, after every move or filter change).
    """

    signals: ClassVar[list[str]] = ["select", "cancel", "highlight"]

    def __init__(
        self,
        items: Sequence[SelectItem[T]],
        keymap: KeyMatcher,
        *,
        title: str = "",
        filterable: bool = True,
        query: str = "",
        max_visible: int = 10,
        hint: str = "",
        empty_text: str = "No matches",
        selected: T | None = None,
    ) -> None:
        super().__init__(keymap)
        self.title = title
        self.filterable = filterable
        self.query = LineInput(query)
        self.cursor = ListCursor(max_visible)
        self.hint = hint
        self.empty_text = empty_text
        self._items: list[SelectItem[T]] = list(items)
        self.visible_items: list[SelectItem[T]] = []
        self.refilter(keep=selected)

    # -- data -------------------------------------------------------------------------------------------------
    @property
    def items(self) -> list[SelectItem[T]]:
        """All items, unfiltered."""
        return self._items

    def set_items(self, items: Sequence[SelectItem[T]], *, keep: T | None = None) -> None:
        """Replace the items; the highlight stays on `keep` (default: the current value) when still listed."""
        current = self.highlighted_value() if keep is None else keep
        self._items = list(items)
        self.refilter(keep=current)

    def refilter(self, *, keep: T | None = None) -> None:
        """Re-apply the query. The highlight follows `keep` if it is still visible, else the first row."""
        self.visible_items = self.filter_items(self.query.text, self._items)
        index = 0
        if keep is not None:
            index = next((i for i, item in enumerate(self.visible_items) if item.value == keep), 0)
        self.cursor.reset(len(self.visible_items), index)
        self.changed()

    def filter_items(self, query: str, items: Sequence[SelectItem[T]]) -> list[SelectItem[T]]:
        """Items matching `query`, best first. Subclasses may search differently."""
        return fuzzy_filter(query, items, SelectItem.haystack)

    def highlighted(self) -> SelectItem[T] | None:
        """The highlighted item, or None when nothing is listed."""
        return self.visible_items[self.cursor.index] if self.visible_items else None

    def highlighted_value(self) -> T | None:
        """Value of the highlighted item."""
        item = self.highlighted()
        return None if item is None else item.value

    # -- keys -------------------------------------------------------------------------------------------------
    def handle_extra_key(self, key: str) -> bool:
        """Subclass hook run before the list keys; True when the key was consumed."""
        return False

    def keypress(self, size: Size, key: str) -> str | None:
        """Apply `key`; return it when it means nothing here."""
        if self.handle_extra_key(key):
            return None
        action = self.matches(key, *SELECT_IDS)
        if action is not None:
            self._list_action(action)
            return None
        if self.filterable and self.query.handle_key(self.keymap, key):
            self.refilter()
            self._highlight()
            return None
        return key

    def _list_action(self, action: str) -> None:
        moves: dict[str, Callable[[], None]] = {
            "tui.select.up": lambda: self.cursor.move(-1, wrap=True),
            "tui.select.down": lambda: self.cursor.move(1, wrap=True),
            "tui.select.pageUp": lambda: self.cursor.page(-1),
            "tui.select.pageDown": lambda: self.cursor.page(1),
        }
        if action in moves:
            moves[action]()
            self.changed()
            self._highlight()
        elif action == "tui.select.confirm":
            self.confirm()
        else:
            self.emit("cancel")

    def confirm(self) -> None:
        """Emit `select` for the highlighted item unless it is disabled or nothing is listed."""
        item = self.highlighted()
        if item is not None and not item.disabled:
            self.emit("select", item.value)

    def _highlight(self) -> None:
        self.emit("highlight", self.highlighted_value())

    # -- drawing ----------------------------------------------------------------------------------------------
    def build(self, width: int) -> Frame:
        """Title rule, query line, visible rows, position/hint line, closing rule."""
        frame = Frame()
        frame.lines.append(rule(width, self.title))
        self.build_header(frame, width)
        if self.filterable:
            prompt = "> "
            frame.cursor = (text_width(prompt) + self.query.cursor_column(), len(frame.lines))
            frame.lines.append([("accent", prompt), self.query.shown()])
        if not self.visible_items:
            frame.lines.append(("muted", f"  {self.empty_text}"))
        for position in self.cursor.window():
            frame.lines.append(self.row(self.visible_items[position], position == self.cursor.index, width))
        footer = self.footer_text()
        if footer:
            frame.lines.append(("dim", footer))
        frame.lines.append(rule(width, style="borderMuted"))
        return frame

    def build_header(self, frame: Frame, width: int) -> None:
        """Subclass hook: lines between the title rule and the query line."""

    def footer_text(self) -> str:
        """Position (when the list scrolls) and the hint."""
        parts = []
        if self.cursor.count > self.cursor.visible:
            parts.append(self.cursor.position_label())
        if self.hint:
            parts.append(self.hint)
        return "  " + "  ".join(parts) if parts else ""

    def row(self, item: SelectItem[T], selected: bool, width: int) -> Markup:
        """One item row: mark, label, then the description in muted colour."""
        style = "dim" if item.disabled else ("accent" if selected else "text")
        line: list[Markup] = [("accent", SELECT_MARK) if selected else NO_MARK, (style, item.label)]
        if item.description:
            line.append(("muted", f"  {item.description}"))
        return line
