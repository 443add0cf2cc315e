"""Generic dialogs: confirm, one-line input, select. Extensions' `ui.confirm/input/select` and the trust prompt.

Each dialog can count down (`start_timeout`): the title shows the seconds left, ticking from one-second alarms of
an `AlarmScheduler` (urwid's `MainLoop`), and at zero it emits `timeout` (the caller treats that as no answer).
Answering or cancelling stops the countdown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from apex_tui.widgets._canvas import Size
from apex_tui.widgets.pickers._base import Frame, PickerBase, rule, text_width
from apex_tui.widgets.pickers._input import LineInput
from apex_tui.widgets.pickers._list import SelectItem, SelectList
from apex_tui.widgets.status import AlarmScheduler
from apex_tui.widgets.transcript import KeyMatcher

TICK_SECONDS = 1.0


class Countdown:
    """Whole seconds left before a dialog gives up; calls `on_tick` after each second and `on_expire` at zero."""

    def __init__(self, on_tick: Callable[[], None], on_expire: Callable[[], None]) -> None:
        self._on_tick = on_tick
        self._on_expire = on_expire
        self._scheduler: AlarmScheduler | None = None
        # Alarm handles are opaque objects owned by the scheduler.
        self._alarm: Any = None
        self.remaining: int | None = None

    def start(self, scheduler: AlarmScheduler, seconds: int) -> None:
        """Begin counting down from `seconds` (replacing a running countdown)."""
        self.stop()
        self._scheduler = scheduler
        self.remaining = max(0, seconds)
        self._schedule()

    def stop(self) -> None:
        """Cancel the countdown; `remaining` becomes None."""
        if self._scheduler is not None and self._alarm is not None:
            self._scheduler.remove_alarm(self._alarm)
        self._alarm = None
        self.remaining = None

    def _schedule(self) -> None:
        assert self._scheduler is not None
        self._alarm = self._scheduler.set_alarm_in(TICK_SECONDS, self._tick)

    def _tick(self, _loop: object, _data: object) -> None:
        self._alarm = None
        if self.remaining is None:
            return
        self.remaining -= 1
        if self.remaining <= 0:
            self.remaining = None
            self._on_expire()
            return
        self._on_tick()
        self._schedule()


def _with_remaining(title: str, countdown: Countdown) -> str:
    return title if countdown.remaining is None else f"{title} ({countdown.remaining}s)"


class _TimedMixin:
    """Countdown plumbing shared by the dialogs (`self` is a PickerBase)."""

    countdown: Countdown

    def _init_countdown(self, picker: PickerBase) -> None:
        self.countdown = Countdown(picker.changed, lambda: picker.emit("timeout"))

    def start_timeout(self, scheduler: AlarmScheduler, seconds: int) -> None:
        """Give up after `seconds` (emits `timeout`); the title shows the seconds left."""
        self.countdown.start(scheduler, seconds)


class ConfirmDialog(_TimedMixin, PickerBase):
    """A question answered with `tui.select.confirm` (signal `confirm`) or `tui.select.cancel` (signal `cancel`).

    Used for `Delete session?`, `/import`, `/share` and extensions' `ui.confirm`. Payload of both signals: None.
    """

    signals: ClassVar[list[str]] = ["confirm", "cancel", "timeout"]

    def __init__(self, title: str, keymap: KeyMatcher, *, message: str = "", hint: str = "") -> None:
        super().__init__(keymap)
        self._init_countdown(self)
        self.title = title
        self.message = message
        self.hint = hint

    def keypress(self, size: Size, key: str) -> str | None:
        """Enter answers yes, Esc no; every other key is swallowed so nothing leaks behind a modal question."""
        action = self.matches(key, "tui.select.confirm", "tui.select.cancel")
        if action is not None:
            self.countdown.stop()
            self.emit("confirm" if action == "tui.select.confirm" else "cancel")
        return None

    def build(self, width: int) -> Frame:
        """Title rule, message lines, hint, closing rule."""
        frame = Frame([rule(width, _with_remaining(self.title, self.countdown))])
        frame.lines.extend(("text", line) for line in self.message.splitlines())
        if self.hint:
            frame.lines.append(("dim", self.hint))
        frame.lines.append(rule(width, style="borderMuted"))
        return frame


class InputDialog(_TimedMixin, PickerBase):
    """One line of text: `tui.select.confirm`/`tui.input.submit` emit `submit` with the text, cancel emits `cancel`.

    `masked` shows `*` per character (API keys); `placeholder` is shown dim while the text is empty. Used for
    extensions' `ui.input`, session rename, tree labels and the custom summary prompt.
    """

    signals: ClassVar[list[str]] = ["submit", "cancel", "timeout"]

    def __init__(
        self,
        title: str,
        keymap: KeyMatcher,
        *,
        text: str = "",
        placeholder: str = "",
        message: str = "",
        masked: bool = False,
        hint: str = "",
    ) -> None:
        super().__init__(keymap)
        self._init_countdown(self)
        self.title = title
        self.input = LineInput(text, masked=masked)
        self.placeholder = placeholder
        self.message = message
        self.hint = hint

    @property
    def text(self) -> str:
        """The text typed so far."""
        return self.input.text

    def keypress(self, size: Size, key: str) -> str | None:
        """Edit, submit or cancel; other keys are returned."""
        action = self.matches(key, "tui.select.confirm", "tui.input.submit", "tui.select.cancel")
        if action is not None:
            self.countdown.stop()
            if action == "tui.select.cancel":
                self.emit("cancel")
            else:
                self.emit("submit", self.input.text)
            return None
        if self.input.handle_key(self.keymap, key):
            self.changed()
            return None
        return key

    def build(self, width: int) -> Frame:
        """Title rule, message, input line with the cursor, hint, closing rule."""
        frame = Frame([rule(width, _with_remaining(self.title, self.countdown))])
        frame.lines.extend(("text", line) for line in self.message.splitlines())
        prompt = "> "
        frame.cursor = (text_width(prompt) + self.input.cursor_column(), len(frame.lines))
        shown = self.input.shown()
        frame.lines.append([("accent", prompt), shown if shown else ("dim", self.placeholder)])
        if self.hint:
            frame.lines.append(("dim", self.hint))
        frame.lines.append(rule(width, style="borderMuted"))
        return frame


class SelectDialog(_TimedMixin, SelectList[str]):
    """Choose one of `options` (strings); `select` carries the chosen string. Not filterable unless asked.

    Used for extensions' `ui.select`, the trust prompt and `Summarize branch?`.
    """

    signals: ClassVar[list[str]] = ["select", "cancel", "highlight", "timeout"]

    def __init__(
        self,
        title: str,
        options: Sequence[str],
        keymap: KeyMatcher,
        *,
        message: str = "",
        descriptions: Sequence[str] = (),
        filterable: bool = False,
        max_visible: int = 10,
        hint: str = "",
    ) -> None:
        self.base_title = title
        self.message = message
        described = list(descriptions) + [""] * (len(options) - len(descriptions))
        items = [
            SelectItem(option, option, description) for option, description in zip(options, described, strict=True)
        ]
        super().__init__(items, keymap, title=title, filterable=filterable, max_visible=max_visible, hint=hint)
        self._init_countdown(self)

    def keypress(self, size: Size, key: str) -> str | None:
        """List keys; answering or cancelling stops the countdown."""
        result = super().keypress(size, key)
        if result is None and self.matches(key, "tui.select.confirm", "tui.select.cancel"):
            self.countdown.stop()
        return result

    def build(self, width: int) -> Frame:
        """The list frame with the countdown in the title."""
        self.title = _with_remaining(self.base_title, self.countdown)
        return super().build(width)

    def build_header(self, frame: Frame, width: int) -> None:
        """The message, under the title."""
        frame.lines.extend(("text", line) for line in self.message.splitlines())
