"""The app's raw screen on a real pseudo-terminal (tui.md §14): every start turns the tty's signal keys off and
clears ICRNL, every stop gives the terminal its own settings back. Suspend (`fg`) and the external editor stop and
start the screen again; ctrl+c must still arrive as a key afterwards, not as SIGINT."""

import os
import termios
from collections.abc import Iterator
from contextlib import contextmanager

from apex_tui.app._screen import AppScreen

SIGNAL_SLOTS = (termios.VINTR, termios.VQUIT, termios.VSTART, termios.VSTOP, termios.VSUSP)


def signal_keys(fd: int) -> list[bytes]:
    chars = termios.tcgetattr(fd)[6]
    return [chars[slot] for slot in SIGNAL_SLOTS]


def icrnl(fd: int) -> bool:
    return bool(termios.tcgetattr(fd)[0] & termios.ICRNL)


@contextmanager
def pty_screen() -> Iterator[tuple[AppScreen, int]]:
    master, slave = os.openpty()
    try:
        with open(slave, closefd=False) as term_in, open(slave, "w", encoding="utf-8", closefd=False) as term_out:
            yield AppScreen(fullscreen=True, input=term_in, output=term_out), slave
    finally:
        os.close(master)
        os.close(slave)


def test_signal_keys_and_icrnl_are_off_after_every_start_and_restored_after_every_stop() -> None:
    with pty_screen() as (screen, fd):
        terminal_keys = signal_keys(fd)
        assert terminal_keys[0] == b"\x03" and icrnl(fd)  # a fresh pty: ctrl+c interrupts, CR becomes LF
        for _round in range(2):  # the second start is what a resume after `fg` or the external editor does
            screen.start()
            assert signal_keys(fd) == [b"\x00"] * 5
            assert not icrnl(fd)
            screen.stop()
            assert signal_keys(fd) == terminal_keys
            assert icrnl(fd)


def test_constructing_the_screen_leaves_the_terminal_alone() -> None:
    with pty_screen() as (_screen, fd):
        assert signal_keys(fd)[0] == b"\x03"
