"""Opening a session's history: the newest messages first, older ones loaded in slices after the first frame, and the
footer's statistics read after it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from apex_tui.app._screen import terminal_keys_notice

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp


def open_history(app: InteractiveApp, head: int) -> None:
    """The session's newest messages become blocks after transcript position `head`; older ones later."""
    session = app.session
    deferred = session.deferred_messages
    if deferred is not None:
        newest = app.history.open_deferred(deferred, head=head)
    else:
        newest = app.history.open(session.messages, head=head)
    for message in newest:
        app.feed.add_message(message)


def load_messages_soon(app: InteractiveApp) -> None:
    """Once the next frame is on screen, hand the agent the rest of a deferred session's messages, a slice per
    event-loop turn (keys are read and drawn in between); the footer's usage figures, which need every message,
    follow. Without a main loop nothing is scheduled: the first use of the agent completes them."""
    loop = app.main_loop
    if loop is None or app.session.deferred_messages is None:
        return
    loop.set_alarm_in(0, lambda *_: loop.set_alarm_in(0, lambda *_: app._spawn_none(app._load_messages())))


def before_draw(app: InteractiveApp) -> None:
    """Before each frame: older history when the view nears its top, then the search's re-run; and the footer's
    usage figures, when they are still due, right after this frame."""
    if app.history.load_if_near_top():
        app.extras.transcript_changed()
    app.extras.before_draw()
    if not app._keys_checked and app.main_loop is not None:
        notice = terminal_keys_notice(app.main_loop.screen, os.environ)
        if notice is not None:
            app._keys_checked = True
            app.feed.notice("warning", notice)
    if app._stats_due:
        fill_stats_after_frame(app)


def fill_stats_after_frame(app: InteractiveApp) -> None:
    """Fill in the footer's usage figures once the frame being drawn is on screen.

    An alarm set while a frame is drawn runs after it. Without a main loop (headless use) they are filled in
    now, before the frame: there is no later point to wait for.
    """
    loop = app.main_loop
    if loop is None:
        app.update_footer()
        return
    if app._stats_alarm is not None:
        return

    def fill(_loop: object = None, _data: object = None) -> None:
        app._stats_alarm = None
        if app.session.deferred_messages is not None:
            return  # the figures need every message: `_load_messages` fills them in once the agent has them
        if app._stats_due and not app.exiting:
            app.update_footer()
            app.redraw()

    app._stats_alarm = loop.set_alarm_in(0, fill)


def before_viewport_key(app: InteractiveApp, key: str) -> None:
    """Jumping to the very top needs every older block first."""
    if app.keymap.matches(key, "tui.altScreen.top"):
        app.load_history()


def load_history(app: InteractiveApp) -> None:
    """Turn every kept-aside older message into blocks (search and the top of the transcript need them)."""
    if app.history.load_all():
        app.extras.transcript_changed()
