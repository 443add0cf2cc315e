"""The status line: a spinner with a message while work runs, nothing while idle.

The spinner advances from timer alarms (urwid `MainLoop.set_alarm_in`, every `FRAME_SECONDS`) only while it is
running, so an idle UI schedules nothing and uses no CPU. Each tick invalidates this widget alone: the transcript's
cached canvas is untouched and the frame redraws only the dock.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol

import urwid

from apex_tui.widgets._canvas import Markup, Size, blank, flow_width, text_canvas

FRAMES = ("⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏")
FRAME_SECONDS = 0.08


class AlarmScheduler(Protocol):
    """The part of `urwid.MainLoop` the spinner uses."""

    # Alarm handles are opaque to us; MainLoop's callback receives (loop, user_data) of any type.
    def set_alarm_in(self, sec: float, callback: Callable[[Any, Any], Any], user_data: Any = None) -> Any:
        """Call `callback` once after `sec` seconds; returns a handle for `remove_alarm`."""
        ...

    def remove_alarm(self, handle: Any) -> bool:
        """Cancel an alarm that has not fired."""
        ...


class StatusLine(urwid.Widget):
    """Spinner + message (`Working...`, `Auto-compacting... (escape to cancel)`, ...). Zero rows when idle.

    `ticks` counts spinner frames drawn from alarms (for tests: an idle status line never ticks).
    """

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self, scheduler: AlarmScheduler | None = None, *, frames: tuple[str, ...] = FRAMES) -> None:
        super().__init__()
        self._scheduler = scheduler
        self._frames = frames
        self._frame = 0
        self._message: str | None = None
        self._alarm: Hashable | None = None
        self.ticks = 0

    @property
    def message(self) -> str | None:
        """The message shown, or None when idle."""
        return self._message

    @property
    def running(self) -> bool:
        """Whether a message (and the spinner) is shown."""
        return self._message is not None

    def attach(self, scheduler: AlarmScheduler) -> None:
        """Use `scheduler` for spinner alarms (the main loop exists only after the widgets)."""
        self._scheduler = scheduler
        if self.running and self._alarm is None:
            self._schedule()

    def start(self, message: str = "Working...") -> None:
        """Show `message` with a spinning indicator (replacing any previous message)."""
        was_running = self.running
        self._message = message
        if not was_running:
            self._frame = 0
            self._schedule()
        self._invalidate()

    def stop(self) -> None:
        """Hide the status line and cancel the spinner alarm."""
        if self._alarm is not None and self._scheduler is not None:
            self._scheduler.remove_alarm(self._alarm)
        self._alarm = None
        if self._message is not None:
            self._message = None
            self._invalidate()

    def _schedule(self) -> None:
        if self._scheduler is not None and self._alarm is None:
            self._alarm = self._scheduler.set_alarm_in(FRAME_SECONDS, self._tick)

    def _tick(self, _loop: object = None, _data: object = None) -> None:
        self._alarm = None
        if not self.running:
            return
        self.ticks += 1
        self._frame = (self._frame + 1) % len(self._frames)
        self._invalidate()
        self._schedule()

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """1 while running, 0 while idle."""
        return 1 if self.running else 0

    def render(self, size: Size, focus: bool = False) -> urwid.Canvas:
        """The spinner frame and message, clipped to width."""
        width = flow_width(size)
        if self._message is None:
            return blank(width, 0)
        markup: list[Markup] = [("accent", self._frames[self._frame]), " ", ("muted", self._message)]
        return text_canvas(markup, width, wrap="ellipsis")
