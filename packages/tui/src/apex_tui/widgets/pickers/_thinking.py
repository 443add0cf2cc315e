"""The thinking-level picker (`/thinking`): levels with descriptions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from apex_tui.widgets.pickers._list import SelectItem, SelectList
from apex_tui.widgets.transcript import KeyMatcher

DEFAULT_LEVELS: tuple[tuple[str, str], ...] = (
    ("off", "No reasoning"),
    ("minimal", "Very brief reasoning"),
    ("low", "Light reasoning"),
    ("medium", "Moderate reasoning"),
    ("high", "Deep reasoning"),
    ("xhigh", "Maximum reasoning"),
)
"""Levels and descriptions; the app passes only the levels its model supports."""


class ThinkingPicker(SelectList[str]):
    """Levels (the current one marked and highlighted). `tui.select.confirm` emits `select` with the level;
    `app.thinking.save` emits `save` with the highlighted level (the app persists `defaultThinkingLevel`)."""

    signals: ClassVar[list[str]] = ["select", "save", "cancel", "highlight"]

    def __init__(
        self,
        keymap: KeyMatcher,
        *,
        current: str,
        levels: Sequence[tuple[str, str]] = DEFAULT_LEVELS,
        hint: str = "",
    ) -> None:
        items = [
            SelectItem(level, level + (" ✓" if level == current else ""), description) for level, description in levels
        ]
        super().__init__(
            items,
            keymap,
            title="Thinking level",
            filterable=False,
            max_visible=len(items) or 1,
            hint=hint,
            selected=current,
        )

    def handle_extra_key(self, key: str) -> bool:
        """`app.thinking.save`."""
        if self.matches(key, "app.thinking.save"):
            level = self.highlighted_value()
            if level is not None:
                self.emit("save", level)
            return True
        return False
