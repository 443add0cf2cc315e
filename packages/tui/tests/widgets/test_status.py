"""Status line: timer-driven spinner, nothing scheduled while idle."""

from collections.abc import Callable
from typing import Any

from urwid.testing import render_text

from apex_tui.widgets import StatusLine
from apex_tui.widgets.status import FRAME_SECONDS, FRAMES


class FakeLoop:
    """Records alarms instead of waiting for them (the spinner only needs set_alarm_in/remove_alarm)."""

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


def test_idle_status_has_no_rows_and_no_alarms() -> None:
    loop = FakeLoop()
    status = StatusLine(loop)
    assert status.rows((20,)) == 0
    assert render_text(status, (20,)) == []
    assert loop.pending == {}


def test_spinner_advances_on_alarms_only_while_running() -> None:
    loop = FakeLoop()
    status = StatusLine(loop)
    status.start("Working...")
    assert render_text(status, (20,), strip=True) == [f"{FRAMES[0]} Working..."]
    assert len(loop.pending) == 1
    loop.fire()
    loop.fire()
    assert render_text(status, (20,), strip=True) == [f"{FRAMES[2]} Working..."]
    assert loop.delays == [FRAME_SECONDS] * 3
    status.start("Compacting context...")  # a new message keeps the one pending alarm
    assert len(loop.pending) == 1
    status.stop()
    assert loop.pending == {}
    assert status.rows((20,)) == 0
    assert status.ticks == 2


def test_scheduler_attached_later() -> None:
    status = StatusLine()
    status.start()
    loop = FakeLoop()
    status.attach(loop)
    assert len(loop.pending) == 1
    assert render_text(status, (12,)) == [f"{FRAMES[0]} Working..."]


def test_long_message_is_clipped() -> None:
    status = StatusLine(FakeLoop())
    status.start("Retrying (1/3) in 2s... (escape to cancel)")
    (line,) = render_text(status, (16,))
    assert len(line) == 16
    assert line.endswith("…")
