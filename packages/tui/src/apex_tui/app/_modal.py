"""Showing a picker or dialog in the editor slot and taking it down again.

`show_modal` puts any widget with urwid signals `(widget, payload)` into the slot. Signals named in `closing` take
the widget down before their handler runs and put back whatever the slot held before (the editor, or the picker a
dialog was opened from: a tree label dialog returns to the tree, an approval dialog to the open picker).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import urwid

if TYPE_CHECKING:
    from apex_tui.app._app import InteractiveApp

CLOSING: frozenset[str] = frozenset({"select", "cancel", "submit", "confirm", "timeout"})

# Any: payloads differ per signal (a model option, a level name, a TreeSelection, None).
Handler = Callable[[Any], object]


class Modal:
    """A widget shown in the slot, with what to restore when it closes."""

    def __init__(self, app: InteractiveApp, widget: urwid.Widget, previous: urwid.Widget) -> None:
        self.app = app
        self.widget = widget
        self.previous = previous
        self.closed = False

    def close(self) -> None:
        """Take the widget down (once); the previous widget returns if the slot still shows this one."""
        if self.closed:
            return
        self.closed = True
        if self.app.slot.original_widget is self.widget:
            previous = self.previous
            # A picker that was itself closed meanwhile must not come back.
            self.app.slot.original_widget = previous if previous in self.app.open_widgets() else self.app.editor
        self.app.modals.pop(id(self.widget), None)
        self.app.redraw()


def show_modal(
    app: InteractiveApp,
    widget: urwid.Widget,
    handlers: Mapping[str, Handler],
    *,
    closing: Collection[str] = CLOSING,
) -> Modal:
    """Show `widget` in the slot and route its signals to `handlers` (see the module docstring)."""
    modal = Modal(app, widget, app.slot.original_widget)
    for name in set(handlers) | (set(closing) & set(getattr(widget, "signals", ()))):
        handler = handlers.get(name)

        def on_signal(
            _widget: object, payload: object = None, *, _name: str = name, _h: Handler | None = handler
        ) -> None:
            if _name in closing:
                modal.close()
            if _h is not None:
                _h(payload)

        urwid.connect_signal(widget, name, on_signal)
    app.modals[id(widget)] = modal
    app.slot.original_widget = widget
    app.redraw()
    return modal
