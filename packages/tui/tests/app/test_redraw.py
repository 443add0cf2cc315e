"""`app.redraw` (Alt+L): after another program wrote over the app, the key makes the terminal show exactly what a
terminal that never saw that output shows.

The app runs on a real pseudo-terminal with its own screen and main loop; two terminal emulators (urwid's
`TermCanvas`) read what it writes: one also gets the other program's output, the other only the app's."""

from __future__ import annotations

import asyncio
import fcntl
import os
import struct
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from app_helpers import AppHarness
from urwid.vterm import TermCanvas, TermModes

from apex_tui.app._screen import AppScreen

COLS, ROWS = 90, 26
# Text everywhere, a colour left on, the DEC line-drawing set switched in (letters become box pieces) and a scroll
# region: what `cat` of a binary file or a background job can leave behind. (The emulator, in UTF-8 mode, ignores
# character set switches: the tmux test in test_tmux_terminal.py shows those undone.)
GARBAGE = (
    b"\x1b[2;3Hgarbage-one\x1b[31;44m\x1b[12;40Hgarbage-two\x1b[5;20r"
    + b"".join(b"\x1b[%d;1H#%s#" % (row, b"x" * (COLS - 2)) for row in range(14, 20))
    + b"\x1b(0\x1b[22;5Hqqqq lettered\x1b[8;60H"
)


class _Host:
    """What `TermCanvas` asks of the widget around it: answers to queries go nowhere."""

    def __init__(self) -> None:
        self.term_modes = TermModes()

    def respond(self, _text: str) -> None:
        pass

    def set_title(self, _title: str) -> None:
        pass

    def beep(self) -> None:
        pass

    def leds(self, _which: object) -> None:
        pass


class Terminal:
    """An emulated terminal: what it shows after the bytes fed to it."""

    def __init__(self) -> None:
        self.canvas = TermCanvas(COLS, ROWS, _Host())  # type: ignore[arg-type]  # duck-typed host
        self.canvas.addstr(b"\x1b%G")  # UTF-8, as the app's terminals are (else each byte takes a cell)

    def feed(self, data: bytes) -> None:
        if data:
            self.canvas.addstr(data)

    def cells(self) -> list[list[tuple[object, object, bytes]]]:
        """Every row as its runs of (attributes, character set, text), and the cursor, for comparison."""
        rows = [[(repr(attr), cs, text) for attr, cs, text in row] for row in self.canvas.content()]
        return [*rows, [("cursor", None, repr(self.canvas.term_cursor).encode())]]

    def text(self) -> str:
        return "\n".join(b"".join(text for _a, _c, text in row).decode("utf-8", "replace") for row in self.cells())


@contextmanager
def pty_pair() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    os.set_blocking(master, False)
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


def drain(master: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


async def settle(master: int, terminals: list[Terminal], *, quiet: float = 0.3, limit: float = 20.0) -> None:
    """Let the main loop handle input and draw until it has written nothing for `quiet` seconds, passing what it
    wrote to every terminal (deferred redraws, such as the footer's, come after the first frame)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    last_output = loop.time()
    while loop.time() - last_output < quiet:
        assert loop.time() < deadline, "the app never stopped drawing"
        await asyncio.sleep(0.02)
        data = drain(master)
        if data:
            last_output = loop.time()
            for terminal in terminals:
                terminal.feed(data)


@pytest.mark.parametrize("fullscreen", [False, True], ids=["inline", "fullscreen"])
@pytest.mark.parametrize("where", ["editor", "model picker"])
async def test_the_redraw_key_removes_what_another_program_wrote(tmp_path: Path, fullscreen: bool, where: str) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=fullscreen)
    seen, clean = Terminal(), Terminal()
    with pty_pair() as (master, slave), open(slave, closefd=False) as term_in:
        with open(slave, "w", encoding="utf-8", closefd=False) as term_out:
            screen = AppScreen(fullscreen=fullscreen, hyperlinks=False, input=term_in, output=term_out)
            main_loop = app.make_main_loop(screen, asyncio.get_running_loop())
            main_loop.start()
            try:
                os.write(master, b"draft prompt" if where == "editor" else b"\x0c")  # ctrl+l: the model selector
                await settle(master, [seen, clean])
                before = clean.cells()
                assert ("draft prompt" if where == "editor" else "faux-think") in clean.text()

                seen.feed(GARBAGE)  # another program writes to the same terminal
                assert "garbage-one" in seen.text() and seen.cells() != before

                os.write(master, b"\x1bl")  # alt+l
                await settle(master, [seen, clean])
            finally:
                main_loop.stop()
    assert "garbage" not in seen.text() and "#xxx" not in seen.text()
    assert seen.cells() == clean.cells() == before  # the key changed nothing else: the picker stays open
