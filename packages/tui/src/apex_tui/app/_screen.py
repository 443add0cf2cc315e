"""The terminal screen of the app: urwid's raw screen with ICRNL cleared and the input filter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import termios
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import urwid

from apex_tui.keybindings import UrwidKey, translate_linefeed
from apex_tui.widgets import link_url
from apex_tui.widgets.hyperlink import osc8_open

_LINK_TERMINALS = frozenset({"iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper", "Tabby", "rio"})


def supports_hyperlinks(env: Mapping[str, str]) -> bool:
    """Whether the terminal described by `env` shows OSC 8 hyperlinks.

    Known terminals only: others could print the sequences as garbage. Inside tmux or screen, the outer terminal is
    unknown, so links stay off there.
    """
    if env.get("TMUX") or env.get("STY") or env.get("TERM", "").startswith("screen"):
        return False
    if env.get("TERM_PROGRAM") in _LINK_TERMINALS or env.get("WT_SESSION") or env.get("KITTY_WINDOW_ID"):
        return True
    term = env.get("TERM", "")
    if any(name in term for name in ("kitty", "ghostty", "wezterm", "foot", "alacritty")):
        return True
    vte = env.get("VTE_VERSION", "")
    return vte.isdigit() and int(vte) >= 5000


TMUX_KEYS_NOTICE = (
    "tmux passes no modified keys to apps here (extended-keys is off): shift+enter, ctrl+shift+p and the like do "
    "nothing. Add `set -s extended-keys on` and `set -as terminal-features 'xterm*:extkeys'` to ~/.tmux.conf, then "
    "restart tmux (ctrl+j also inserts a new line)."
)
TERMINAL_KEYS_NOTICE = (
    "This terminal reports no modified keys (neither the kitty keyboard protocol nor modifyOtherKeys): shift+enter, "
    "ctrl+shift+p and the like do nothing. ctrl+j inserts a new line; kitty, WezTerm, foot, Ghostty, iTerm2 or "
    "xterm report those keys."
)


MODIFY_OTHER_KEYS_ON = "\x1b[>4;1m"
MODIFY_OTHER_KEYS_OFF = "\x1b[>4m"


def in_tmux(env: Mapping[str, str]) -> bool:
    """Inside tmux (it sets `TMUX` for every pane)."""
    return bool(env.get("TMUX"))


def in_multiplexer(env: Mapping[str, str]) -> bool:
    """Inside tmux or GNU screen: the multiplexer, not the outer terminal, decides which keys arrive."""
    return bool(env.get("TMUX") or env.get("STY") or env.get("TERM", "").startswith(("screen", "tmux")))


def tmux_keys_notice(env: Mapping[str, str]) -> str | None:
    """`TMUX_KEYS_NOTICE` when the app runs in tmux with `extended-keys` off; None otherwise (or when tmux cannot be
    asked)."""
    if not env.get("TMUX"):
        return None
    tmux = shutil.which("tmux")
    if tmux is None:
        return None
    try:
        found = subprocess.run(
            [tmux, "show-options", "-sv", "extended-keys"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return TMUX_KEYS_NOTICE if found.returncode == 0 and found.stdout.strip() == "off" else None


def terminal_keys_notice(screen: object, env: Mapping[str, str]) -> str | None:
    """`TERMINAL_KEYS_NOTICE` once the terminal answered urwid's keyboard protocol queries with neither protocol
    (outside a multiplexer, which `tmux_keys_notice` covers); None while unanswered or when one is on."""
    modes = getattr(screen, "modes", None)
    if modes is None or in_multiplexer(env) or not getattr(screen, "extended_keys", False):
        return None
    kitty, other = getattr(modes, "kitty_keyboard", None), getattr(modes, "modify_other_keys", None)
    return TERMINAL_KEYS_NOTICE if kitty is False and other is False else None


class AppScreen(urwid.display.raw.Screen):
    """Raw screen with bracketed paste and extended keys; Enter and Ctrl+J differ because ICRNL is cleared.

    `hyperlinks` (default: `supports_hyperlinks` of the environment) writes link runs (`LinkStyle`) as OSC 8 links.

    Ctrl+C/Z/\\ and Ctrl+S/Q reach the app as keys (no signals, no flow control). In `regular` mode the first
    start pushes the shell's output into the scrollback and draws from the top, without the alternate screen.
    """

    def __init__(self, *, fullscreen: bool = False, hyperlinks: bool | None = None, **kwargs: Any) -> None:
        # Any: urwid's own keyword arguments (input/output streams) pass through.
        super().__init__(bracketed_paste_mode=True, extended_keys=True, **kwargs)
        self.fullscreen = fullscreen
        self.hyperlinks = supports_hyperlinks(os.environ) if hyperlinks is None else hyperlinks
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
        if self.extended_keys and in_tmux(os.environ):
            # tmux answers none of urwid's keyboard protocol queries, so urwid never asks it for modified keys, and
            # with `extended-keys on` tmux forwards them only to an app that asked (modifyOtherKeys); off, it ignores
            # the request.
            self.write(MODIFY_OTHER_KEYS_ON)
            self.flush()
        if not self.fullscreen:
            # The frame fills the whole screen from its top row in both modes, so rows are addressed absolutely.
            # urwid's main-buffer drawing moves the cursor relative to where it believes the last frame left it,
            # and it does not track that after a frame without a cursor (a dialog or picker): every later frame
            # then landed rows too low or too high, leaving dialog remnants and losing the editor and footer.
            self._rows_used = None
        self._clear_icrnl()
        self._signal_keys_off()

    def _stop(self) -> None:
        # urwid leaves the cursor on the last row of a main-buffer frame, where the shell's prompt (or the job
        # control message of a suspend) would overwrite the footer: a line feed puts it below the frame.
        below = self._started and not self._alternate_buffer
        if self._started and self.extended_keys and in_tmux(os.environ):
            self.write(MODIFY_OTHER_KEYS_OFF)
        super()._stop()
        if below:
            self.write("\n")
            self.flush()

    def _attr_to_escape(self, a: Hashable) -> str:
        """urwid's escape for the run's colours, then (with `hyperlinks` on) the OSC 8 opener of a link run.

        urwid closes an open link before the next run whose escape does not end with ST.
        """
        found = super()._attr_to_escape(a)
        url = link_url(a) if self.hyperlinks else None
        return found + osc8_open(url) if url else found

    def _signal_keys_off(self) -> None:
        # On every start, not once: `stop()` (suspend, external editor) gives the terminal its own keys back,
        # and urwid sets signal keys again only when none were ever set (measured: after `fg`, ctrl+c was SIGINT).
        # What the terminal had is what the next `stop()` restores.
        previous = self.tty_signal_keys(
            intr="undefined",
            quit="undefined",
            start="undefined",
            stop="undefined",
            susp="undefined",
            fileno=self._input_fileno(),
        )
        if previous is not None:
            self._old_signal_keys = previous

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
