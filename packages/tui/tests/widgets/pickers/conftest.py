"""Shared helpers: the real default keybindings and a signal recorder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import urwid

from apex_tui.keybindings import KeybindingManager


@pytest.fixture
def keymap() -> KeybindingManager:
    return KeybindingManager("linux")


class Signals:
    """Records `(name, payload)` for every signal a widget emits."""

    def __init__(self, widget: urwid.Widget, *names: str) -> None:
        self.events: list[tuple[str, Any]] = []
        for name in names:
            urwid.connect_signal(widget, name, self._recorder(name))

    def _recorder(self, name: str) -> Callable[[Any, Any], None]:
        def record(_widget: Any, payload: Any) -> None:
            self.events.append((name, payload))

        return record

    def names(self) -> list[str]:
        return [name for name, _ in self.events]


class FakeLoop:
    """Alarm scheduler that fires on demand instead of waiting."""

    def __init__(self) -> None:
        self.pending: dict[int, Callable[[Any, Any], Any]] = {}
        self.delays: list[float] = []
        self._next = 0

    def set_alarm_in(self, sec: float, callback: Callable[[Any, Any], Any], user_data: Any = None) -> int:
        self._next += 1
        self.pending[self._next] = callback
        self.delays.append(sec)
        return self._next

    def remove_alarm(self, handle: Any) -> bool:
        return self.pending.pop(handle, None) is not None

    def fire(self) -> None:
        handle, callback = next(iter(self.pending.items()))
        del self.pending[handle]
        callback(self, None)
