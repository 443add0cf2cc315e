"""The terminal screen of the app (tui.md §14): urwid's raw screen with ICRNL cleared and the input filter."""

from __future__ import annotations

import os
import sys
import termios
from collections.abc import Sequence
from typing import Any

import urwid

from apex_tui.keybindings import UrwidKey, translate_linefeed


class AppScreen(urwid.display.raw.Screen):
    """Raw screen with bracketed paste and extended keys; Enter and Ctrl+J differ because ICRNL is cleared.

    Ctrl+C/Z/\\ and Ctrl+S/Q reach the app as keys (no signals, no flow control). In `regular` mode the first
    start pushes the shell's output into the scrollback and draws from the top, without the alternate screen.
    """

    def __init__(self, *, fullscreen: bool = False) -> None:
        super().__init__(bracketed_paste_mode=True, extended_keys=True)
        self.fullscreen = fullscreen
        self.tty_signal_keys(intr="undefined", quit="undefined", start="undefined", stop="undefined", susp="undefined")
        truecolor = os.environ.get("COLORTERM") in ("truecolor", "24bit")
        self.set_terminal_properties(colors=16777216 if truecolor else 256)

    def _start(self, alternate_buffer: bool = True, *args: Any, **kwargs: Any) -> None:
        # Any: mirrors urwid's own signature, which passes through arbitrary arguments.
        if not self.fullscreen and alternate_buffer is True:
            alternate_buffer = False
            rows = self.get_cols_rows()[1]
            # urwid draws from the cursor row and clips in the main buffer (measured): make room first.
            self.write("\n" * rows + "\x1b[H")
            self.flush()
        super()._start(alternate_buffer, *args, **kwargs)
        self._clear_icrnl()

    def _clear_icrnl(self) -> None:
        fd = self._input_fileno()
        if fd is not None and os.isatty(fd):
            mode = termios.tcgetattr(fd)
            mode[0] &= ~termios.ICRNL
            termios.tcsetattr(fd, termios.TCSANOW, mode)


def input_filter(keys: Sequence[UrwidKey], raw: Sequence[int]) -> list[UrwidKey]:
    """MainLoop input filter: raw line feed → `ctrl j`, carriage return → `enter`."""
    return translate_linefeed(keys, raw)


def stdout_is_tty() -> bool:
    """Whether the resume hint is worth printing."""
    try:
        return sys.stdout.isatty()
    except (OSError, ValueError):
        return False
