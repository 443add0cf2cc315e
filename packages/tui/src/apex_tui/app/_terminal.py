"""Terminal-level operations: switching layout, the external editor, suspending, and the urwid main loop."""

from __future__ import annotations

import asyncio
import functools
import os
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import urwid

from apex_tui.app import _history_loading as history_loading
from apex_tui.app._screen import input_filter
from apex_tui.keybindings import UrwidKey

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def set_layout(app: InteractiveApp, fullscreen: bool) -> None:
    """Switch between the regular and the fullscreen layout now: the screen restarts on the main or the
    alternate buffer, mouse handling and the transcript's scrollbar follow."""
    if app.root.fullscreen == fullscreen:
        return
    app.root.fullscreen = fullscreen
    scrollbar = app.session.settings_manager.get("fullscreenScrollbar")
    app.transcript.set_scrollbar(scrollbar if fullscreen and scrollbar in ("auto", "always", "hidden") else "hidden")
    app.transcript.mouse_select = fullscreen
    loop = app.main_loop
    if loop is None:
        return
    screen = app._screen()
    restart = bool(getattr(screen, "started", False)) and hasattr(screen, "fullscreen")
    if restart:
        screen.stop()
        screen.fullscreen = fullscreen
    loop.handle_mouse = fullscreen
    if restart:
        screen.start()
    screen.set_mouse_tracking(fullscreen)
    loop.screen_size = None
    screen.clear()
    loop.draw_screen()


def screen(app: InteractiveApp) -> Any:
    # Any: urwid's screen base class has no typed start/stop pair for every display.
    return app.main_loop.screen if app.main_loop is not None else None


def external_editor(app: InteractiveApp) -> None:
    """`app.editor.external`: edit the expanded text in `$VISUAL` / `$EDITOR` / `nano`."""
    settings_editor = app.session.settings_manager.get("externalEditor")
    command = settings_editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "nano"
    screen = app._screen()
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as handle:
        handle.write(app.editor.expanded_text())
        path = handle.name
    try:
        if screen is not None:
            screen.stop()
        code = subprocess.call([*shlex.split(command), path])
        if code == 0:
            text = Path(path).read_text(encoding="utf-8").removesuffix("\n")
            app.editor.set_text(text)
    finally:
        os.unlink(path)
        if screen is not None:
            screen.start()
            if app.main_loop is not None:
                app.main_loop.screen_size = None
                app.main_loop.draw_screen()


def suspend(app: InteractiveApp) -> None:
    """`app.suspend`: stop the UI, stop the process group; redraw on `fg`."""
    screen = app._screen()
    if screen is not None:
        screen.stop()
    os.kill(0, signal.SIGTSTP)
    if screen is not None:
        screen.start()
        if app.main_loop is not None:
            app.main_loop.screen_size = None
            app.main_loop.draw_screen()


# Undoes what another program's output may have left behind before the repaint: text set in the DEC line-drawing
# characters (G0 back to ASCII, G1 to the line drawing urwid expects, shift in), colours, a scroll region.
_TERMINAL_STATE_RESET = "\x1b(B\x1b)0\x0f\x1b[0m\x1b[r"


def repaint(app: InteractiveApp) -> None:
    """`app.redraw`: draw every cell again, whatever the terminal shows now.

    The screen forgets what it drew (so no row is skipped as unchanged) and the size is read again (a resize that
    went unnoticed). Every row is rewritten in place: the terminal is not erased first, which would flicker and,
    in the main buffer, push a copy of the frame into the scrollback of some terminals.
    """
    loop = app.main_loop
    if loop is None:
        return
    write = getattr(loop.screen, "write", None)
    if write is not None:
        write(_TERMINAL_STATE_RESET)
    loop.screen_size = None
    loop.screen.clear()
    loop.draw_screen()


def filter_input(app: InteractiveApp, keys: Sequence[UrwidKey], raw: Sequence[int]) -> list[UrwidKey]:
    """The main loop's input filter: line feeds translated, and the `app.redraw` key taken before any widget sees
    it, so it repaints wherever the focus is (editor, picker, dialog, fullscreen search)."""
    keys = input_filter(keys, raw)
    kept = [key for key in keys if not app.keymap.matches(key, "app.redraw")]
    if len(kept) != len(keys):
        repaint(app)
    return kept


def make_main_loop(
    app: InteractiveApp, screen: urwid.BaseScreen, aio_loop: asyncio.AbstractEventLoop
) -> urwid.MainLoop:
    """The urwid main loop on `aio_loop`. Links become OSC 8 hyperlinks when the screen shows them."""
    app.ctx.markdown.set_hyperlinks(bool(getattr(screen, "hyperlinks", False)))
    loop = urwid.MainLoop(
        app.root,
        palette=app.theme.palette(),
        screen=screen,
        event_loop=urwid.AsyncioEventLoop(loop=aio_loop),
        input_filter=functools.partial(filter_input, app),  # type: ignore[arg-type]  # urwid's hint is narrower
        handle_mouse=app.root.fullscreen,
        pop_ups=False,
    )
    app.attach(loop)
    history_loading.load_messages_soon(app)
    if app.runner is not None and not app._extensions_started:
        loop.set_alarm_in(0, lambda *_: app.start_extensions())
    return loop
