"""Binding the session's extensions to the app: their UI, start-up, and keyboard shortcuts."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def bind_extensions(app: InteractiveApp) -> None:
    """Extensions talk to this app: `ctx.ui` is `app.ui`, failures are error lines, `ctx.shutdown()` quits."""
    runner = app.runner
    if runner is None:
        return
    runner.set_ui(app.ui, "tui")
    runner.on_error(
        lambda error: app.notify(f"Extension error ({error.extension_path}, {error.event}): {error.error}", "error")
    )
    app.runtime.shutdown_handler = lambda: app._spawn_none(app._shutdown_when_idle())


def start_extensions_soon(app: InteractiveApp) -> None:
    """Emit `session_start` once the UI is bound: now inside a running loop, else when the main loop starts."""
    if app.runner is None:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # `make_main_loop` schedules it
    app.start_extensions()


def start_extensions(app: InteractiveApp) -> None:
    """`session_start` for the extensions (once; a no-op when the startup code already emitted it)."""
    if app._extensions_started or app.runner is None:
        return
    app._extensions_started = True
    app.spawn(app.runtime.start_extensions())


def refresh_shortcuts(app: InteractiveApp) -> None:
    """Pick up shortcuts registered since the last look (and a new keymap); each warning is shown once."""
    runner = app.runner
    if runner is not None:
        for warning in app.shortcuts.refresh(app.keymap, runner.get_shortcuts()):
            app.notify(warning, "warning")


def run_extension_shortcut(app: InteractiveApp, key: str) -> bool:
    """Run the extension shortcut bound to `key`; False when none is."""
    runner = app.runner
    if runner is None:
        return False
    app.refresh_shortcuts()
    shortcut = app.shortcuts.by_key.get(key)
    if shortcut is None:
        return False
    event = f"shortcut:{shortcut.key}"
    try:
        value = shortcut.handler(runner.create_context())
    except Exception as exc:  # an extension's bug is reported, never raised into the key handling
        runner.report_error(shortcut.extension_path, event, exc)
        return True
    if inspect.isawaitable(value):
        app.spawn(app._await_extension(value, runner, shortcut.extension_path, event))
    return True
