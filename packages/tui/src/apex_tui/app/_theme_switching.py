"""Applying a theme to the running app and following edits of its file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apex_coding_agent import (
    ThemeSource,
)
from apex_tui.app._themes import POLL_SECONDS
from apex_tui.theme import Theme

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def apply_theme(app: InteractiveApp, theme: Theme) -> None:
    """Use `theme` from now on (palette re-registered, every cached render dropped)."""
    app.theme = theme
    if app.main_loop is not None:
        app.main_loop.screen.register_palette(theme.palette())
        app.main_loop.screen.clear()
    app.transcript.set_theme_key(app.ctx.theme_key + 1)
    app.redraw()


def use_theme(app: InteractiveApp, source: ThemeSource) -> Theme:
    """Activate the discovered theme `source` and hot-reload its file from now on; returns the `Theme`."""
    theme = app.themes.parse(source)
    app.apply_theme(theme)
    app.theme_watcher.watch(source if theme.name == source.name else None)
    schedule_theme_poll(app)
    return theme


def theme_file_changed(app: InteractiveApp, theme: Theme) -> None:
    app.apply_theme(theme)
    app.notify(f"Theme reloaded: {theme.name}")


def schedule_theme_poll(app: InteractiveApp) -> None:
    """Poll the active theme file every `POLL_SECONDS` while one is watched (one alarm at a time)."""
    loop = app.main_loop
    if loop is None or app._theme_alarm is not None or app.theme_watcher.path is None:
        return

    def tick(_loop: object = None, _data: object = None) -> None:
        app._theme_alarm = None
        app.theme_watcher.poll()
        schedule_theme_poll(app)

    app._theme_alarm = loop.set_alarm_in(POLL_SECONDS, tick)
