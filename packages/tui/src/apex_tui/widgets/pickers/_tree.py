"""The `/tree` navigator: browse, filter, fold, label, pick a point to go to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Literal

import urwid

from apex_tui.widgets._canvas import Markup, Size
from apex_tui.widgets.pickers._base import Frame, PickerBase, rule, text_width
from apex_tui.widgets.pickers._dialogs import SelectDialog
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.pickers._list import NO_MARK, SELECT_MARK
from apex_tui.widgets.pickers._tree_model import (
    FILTER_MODES,
    FilterMode,
    TreeNode,
    TreeRow,
    flatten,
    nearest,
    prefix,
    visible_rows,
)
from apex_tui.widgets.transcript import KeyMatcher

SummaryChoice = Literal["none", "summarize", "custom"]
SUMMARY_TITLE: Final = "Summarize branch?"
SUMMARY_OPTIONS: Final[dict[str, SummaryChoice]] = {
    "No summary": "none",
    "Summarize": "summarize",
    "Summarize with custom prompt": "custom",
}
FILTER_TOGGLES: Final[dict[str, FilterMode]] = {
    "app.tree.filter.noTools": "no-tools",
    "app.tree.filter.userOnly": "user-only",
    "app.tree.filter.labeledOnly": "labeled-only",
    "app.tree.filter.all": "all",
}
KIND_STYLE: Final = {"user": "accent", "assistant": "success", "tool_result": "muted", "bash": "bashMode"}
KIND_NAME: Final = {
    "tool_result": "tool",
    "custom_message": "custom",
    "branch_summary": "branch summary",
    "model_change": "model",
    "thinking_level_change": "thinking",
    "session_info": "name",
}


@dataclass(frozen=True)
class TreeSelection:
    """Payload of `select`: where to go and whether to summarize the branch being left.

    `is_current_leaf`: the target is where the session already is (the app says `Already at this point`).
    `summary` is `custom` when the user wants to type a summary focus prompt next.
    """

    target_id: str
    summary: SummaryChoice = "none"
    is_current_leaf: bool = False


class TreeNavigator(PickerBase):
    """Session tree picker over a flat list of `TreeNode`s (any depth; nothing here recurses).

    Keys: `tui.select.up/down` move (wrap), `tui.select.pageUp/Down` and `tui.editor.cursorLeft/Right` page,
    `app.tree.foldOrUp` folds the highlighted segment start or jumps to the previous segment start,
    `app.tree.unfoldOrDown` unfolds or jumps to the next segment start or branch end, `app.tree.filter.*` set or
    toggle the filter, `app.tree.toggleLabelTimestamp`, printable keys and `tui.editor.deleteCharBackward` edit the
    query, `tui.select.cancel` clears the query first and then emits `cancel`.

    Signals (callback `(widget, payload)`): `select` (TreeSelection; after the `Summarize branch?` question
    unless `skip_summary_prompt` or the target is the current leaf; cancelling the question returns to the
    tree), `label_edit` (`(id, current label or None)`: the app asks for text and calls `set_label`), `copy`
    (`(id, text)` on `app.message.copy`), `cancel`.

    `rows_built` counts the row markups built by the last frame: only the visible window is ever drawn.
    """

    signals: ClassVar[list[str]] = ["select", "label_edit", "copy", "cancel"]

    def __init__(
        self,
        nodes: Sequence[TreeNode],
        keymap: KeyMatcher,
        *,
        leaf_id: str | None = None,
        filter_mode: FilterMode = "default",
        max_visible: int = 15,
        skip_summary_prompt: bool = False,
        hint: str = "",
    ) -> None:
        super().__init__(keymap)
        self.tree_rows: list[TreeRow] = flatten(nodes)
        self._row_of = {row.node.id: index for index, row in enumerate(self.tree_rows)}
        self.leaf_id = leaf_id if leaf_id is not None else self._derive_leaf()
        self.labels: dict[str, str] = {r.node.id: r.node.label for r in self.tree_rows if r.node.label}
        self.label_times: dict[str, str] = {
            r.node.id: r.node.label_timestamp for r in self.tree_rows if r.node.label and r.node.label_timestamp
        }
        self.filter_mode: FilterMode = filter_mode
        self.query = LineInput()
        self.folded: set[str] = set()
        self.show_label_times = False
        self.max_visible = max(1, max_visible)
        self.skip_summary_prompt = skip_summary_prompt
        self.hint = hint
        self.prompt: SelectDialog | None = None
        self.shown: list[int] = []
        self.position = 0
        self.rows_built = 0
        self._search_text: dict[str, str] = {}
        self._refresh(keep=self._row_of.get(self.leaf_id or "", len(self.tree_rows) - 1))

    # -- state ------------------------------------------------------------------------------------------------
    def _derive_leaf(self) -> str | None:
        # The deepest node of the active path: on the path, but its first child (the active one) is not.
        leaf: str | None = None
        for index, row in enumerate(self.tree_rows):
            if row.node.is_leaf_path:
                following = self.tree_rows[index + 1] if index + 1 < len(self.tree_rows) else None
                if following is None or following.parent_index != index or not following.node.is_leaf_path:
                    leaf = row.node.id
        return leaf

    def _refresh(self, keep: int | None = None) -> None:
        """Recompute the shown rows; the highlight stays on row `keep` (default: current) or the nearest above."""
        if keep is None:
            keep = self.shown[self.position] if self.shown else 0
        self.shown = visible_rows(
            self.tree_rows,
            mode=self.filter_mode,
            query=self.query.text,
            folded=self.folded,
            labels=self.labels,
            leaf_id=self.leaf_id,
            search_text=self._search_text,
        )
        self.position = nearest(self.shown, keep)
        self.changed()

    def selected(self) -> TreeNode | None:
        """The highlighted node."""
        return self.tree_rows[self.shown[self.position]].node if self.shown else None

    def select_id(self, node_id: str) -> None:
        """Highlight `node_id` (or the nearest shown row above it)."""
        if node_id in self._row_of:
            self.position = nearest(self.shown, self._row_of[node_id])
            self.changed()

    def set_filter(self, mode: FilterMode) -> None:
        """Switch the filter mode."""
        self.filter_mode = mode
        self._refresh()

    def set_label(self, node_id: str, label: str | None, timestamp: str | None = None) -> None:
        """Show the label the app stored (None or empty clears it)."""
        self._search_text.pop(node_id, None)
        if label:
            self.labels[node_id] = label
            if timestamp:
                self.label_times[node_id] = timestamp
        else:
            self.labels.pop(node_id, None)
            self.label_times.pop(node_id, None)
        self._refresh()

    # -- keys -------------------------------------------------------------------------------------------------
    def keypress(self, size: Size, key: str) -> str | None:
        """See the class docstring; unknown keys are returned."""
        if self.prompt is not None:
            result = self.prompt.keypress(size, key)
            self.changed()
            return result
        action = self.matches(
            key,
            "tui.select.up",
            "tui.select.down",
            "tui.select.pageUp",
            "tui.select.pageDown",
            "tui.editor.cursorLeft",
            "tui.editor.cursorRight",
            "app.tree.foldOrUp",
            "app.tree.unfoldOrDown",
            "app.tree.editLabel",
            "app.tree.toggleLabelTimestamp",
            "app.tree.filter.default",
            *FILTER_TOGGLES,
            "app.tree.filter.cycleForward",
            "app.tree.filter.cycleBackward",
            "app.message.copy",
            "tui.select.confirm",
            "tui.select.cancel",
        )
        if action is not None:
            self._act(action)
            return None
        if self.query.handle_key(self.keymap, key, ("tui.editor.deleteCharBackward",)):
            self._refresh()
            return None
        return key

    def _act(self, action: str) -> None:
        count = len(self.shown)
        node = self.selected()
        if action in ("tui.select.up", "tui.select.down") and count:
            self.position = (self.position + (1 if action == "tui.select.down" else -1)) % count
        elif action in ("tui.select.pageUp", "tui.editor.cursorLeft"):
            self.position = max(0, self.position - self.max_visible)
        elif action in ("tui.select.pageDown", "tui.editor.cursorRight"):
            self.position = max(0, min(self.position + self.max_visible, count - 1))
        elif action == "app.tree.foldOrUp":
            self._fold_or_up()
        elif action == "app.tree.unfoldOrDown":
            self._unfold_or_down()
        elif action == "app.tree.toggleLabelTimestamp":
            self.show_label_times = not self.show_label_times
        elif action == "app.tree.filter.default":
            self.set_filter("default")
        elif action in FILTER_TOGGLES:
            mode = FILTER_TOGGLES[action]
            self.set_filter("default" if self.filter_mode == mode else mode)
        elif action in ("app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"):
            step = 1 if action == "app.tree.filter.cycleForward" else -1
            self.set_filter(FILTER_MODES[(FILTER_MODES.index(self.filter_mode) + step) % len(FILTER_MODES)])
        elif action == "tui.select.cancel":
            if self.query.text:
                self.query.set_text("")
                self._refresh()
            else:
                self.emit("cancel")
        elif node is None:
            pass
        elif action == "app.tree.editLabel":
            self.emit("label_edit", (node.id, self.labels.get(node.id)))
        elif action == "app.message.copy":
            self.emit("copy", (node.id, node.text))
        elif action == "tui.select.confirm":
            self._confirm(node)
        self.changed()

    def _fold_or_up(self) -> None:
        if not self.shown:
            return
        index = self.shown[self.position]
        row = self.tree_rows[index]
        if row.segment_start and row.subtree_end > index + 1 and row.node.id not in self.folded:
            self.folded.add(row.node.id)
            self._refresh(keep=index)
            return
        for position in range(self.position - 1, -1, -1):
            if self.tree_rows[self.shown[position]].segment_start:
                self.position = position
                return

    def _unfold_or_down(self) -> None:
        if not self.shown:
            return
        index = self.shown[self.position]
        if self.tree_rows[index].node.id in self.folded:
            self.folded.discard(self.tree_rows[index].node.id)
            self._refresh(keep=index)
            return
        for position in range(self.position + 1, len(self.shown)):
            row = self.tree_rows[self.shown[position]]
            if row.segment_start or row.segment_end:
                self.position = position
                return
        self.position = len(self.shown) - 1

    def _confirm(self, node: TreeNode) -> None:
        if node.id == self.leaf_id:
            self.emit("select", TreeSelection(node.id, "none", is_current_leaf=True))
        elif self.skip_summary_prompt:
            self.emit("select", TreeSelection(node.id))
        else:
            self._ask_summary(node.id)

    def _ask_summary(self, target_id: str) -> None:
        prompt = SelectDialog(SUMMARY_TITLE, list(SUMMARY_OPTIONS), self.keymap)

        def chosen(_widget: object, option: str) -> None:
            self.prompt = None
            self.changed()
            self.emit("select", TreeSelection(target_id, SUMMARY_OPTIONS[option]))

        def back(_widget: object, _payload: object) -> None:
            self.prompt = None
            self.changed()

        urwid.connect_signal(prompt, "select", chosen)
        urwid.connect_signal(prompt, "cancel", back)
        self.prompt = prompt

    # -- drawing ----------------------------------------------------------------------------------------------
    def build(self, width: int) -> Frame:
        """Title rule, query line, the window of rows around the highlight, status line, closing rule."""
        if self.prompt is not None:
            return self.prompt.frame(width)
        frame = Frame([rule(width, "Session tree")])
        prompt = "> "
        frame.cursor = (text_width(prompt) + self.query.cursor_column(), 1)
        frame.lines.append([("accent", prompt), self.query.text or ("dim", "type to search")])
        start = max(0, min(self.position - self.max_visible // 2, len(self.shown) - self.max_visible))
        window = self.shown[start : start + self.max_visible]
        self.rows_built = len(window)
        if not window:
            frame.lines.append(("muted", "  No entries found"))
        for offset, index in enumerate(window):
            frame.lines.append(self._row_markup(self.tree_rows[index], index, start + offset == self.position))
        status = f"  ({self.position + 1 if self.shown else 0}/{len(self.shown)})"
        if self.filter_mode != "default":
            status += f" [{self.filter_mode}]"
        if self.hint:
            status += f"  {self.hint}"
        frame.lines.append(("dim", status))
        frame.lines.append(rule(width, style="borderMuted"))
        return frame

    def _row_markup(self, row: TreeRow, index: int, selected: bool) -> Markup:
        node = row.node
        line: list[Markup] = [("accent", SELECT_MARK) if selected else NO_MARK, ("dim", prefix(row))]
        line.append(("accent", "• ") if node.is_leaf_path else "  ")
        if node.id in self.folded:
            line.append(("accent", "▸ "))
        label = self.labels.get(node.id)
        if label:
            stamp = self.label_times.get(node.id) if self.show_label_times else None
            line.append(("warning", f"[{label}{' ' + stamp if stamp else ''}] "))
        name = KIND_NAME.get(node.kind, node.kind)
        line.append((KIND_STYLE.get(node.kind, "dim"), f"{name}: "))
        first = node.text.split("\n", 1)[0].strip()
        line.append(("accent" if selected else "text", first))
        if node.id in self.folded:
            line.append(("dim", f" (+{row.subtree_end - index - 1})"))
        if node.id == self.leaf_id:
            line.append(("dim", " ← current"))
        return line
