"""The first frame, drawn before the session runtime exists.

Importing the coding-agent runtime and building the session take most of a start; the user should see the editor
at once. `paint_startup_frame` starts the app's screen and draws an empty transcript, an editor and a footer (cwd
only: the model is known once the runtime is built). The screen stays started: the app's main loop reuses it, so
keys typed while the runtime builds wait in the terminal's input queue and reach the app's editor when its loop
runs (starting the screen again would flush them).

Only urwid and this package's light widgets are imported here.
"""

from __future__ import annotations

from pathlib import Path

import urwid

from apex_tui.editor import Editor
from apex_tui.keybindings import KeybindingManager
from apex_tui.theme import builtin_theme
from apex_tui.widgets.footer import Footer, FooterState


def startup_widget(keymap: KeybindingManager, cwd: str) -> urwid.Widget:
    """Blank transcript area, the editor and the footer, laid out like the app's dock."""
    editor = Editor(keymap, cwd=Path(cwd), commands=list)
    footer = Footer(FooterState(cwd=cwd, home=str(Path.home())))
    return urwid.Pile([("weight", 1, urwid.SolidFill(" ")), ("pack", editor), ("pack", footer)], focus_item=1)


def paint_startup_frame(screen: urwid.BaseScreen, keymap: KeybindingManager, cwd: str) -> None:
    """Start `screen` (if needed) and draw the startup frame on it once."""
    screen.register_palette(builtin_theme("dark").palette())
    if not screen.started:
        screen.start()
    size = screen.get_cols_rows()
    screen.draw_screen(size, startup_widget(keymap, cwd).render(size, focus=True))
