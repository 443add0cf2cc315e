"""The pending-messages area above the editor: queued steering / follow-up messages as plain data.

One dim line per queued message (`Steering: …` / `Follow-up: …`, newlines shown as spaces, cut with `…` at the
width), then `↳ <dequeue key> to edit all queued messages`. No messages → zero rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import urwid

from apex_tui.widgets._canvas import Size, blank, flow_width, stack, text_canvas

QueueKind = Literal["steering", "followUp"]

_PREFIX: dict[QueueKind, str] = {"steering": "Steering", "followUp": "Follow-up"}


@dataclass(frozen=True)
class PendingMessage:
    """A queued message as the runtime reports it."""

    kind: QueueKind
    text: str


def pending_lines(messages: Sequence[PendingMessage], dequeue_hint: str) -> list[str]:
    """The area's lines: one per message, then the dequeue hint (only when something is queued)."""
    lines = [f"{_PREFIX[m.kind]}: {m.text}".replace("\r\n", " ").replace("\n", " ") for m in messages]
    if lines and dequeue_hint:
        lines.append(f"↳ {dequeue_hint} to edit all queued messages")
    return lines


class PendingArea(urwid.Widget):
    """Flow widget showing the queued messages; `set_messages` (or `set_queues`) replaces what it shows."""

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True

    def __init__(self) -> None:
        super().__init__()
        self._lines: tuple[str, ...] = ()
        self._cached: tuple[int, urwid.CompositeCanvas] | None = None

    @property
    def lines(self) -> list[str]:
        """The lines shown (untruncated)."""
        return list(self._lines)

    def set_messages(self, messages: Sequence[PendingMessage], dequeue_hint: str) -> None:
        """Show these queued messages; `dequeue_hint` is the key text of `app.message.dequeue` (e.g. `alt+up`)."""
        lines = tuple(pending_lines(messages, dequeue_hint))
        if lines != self._lines:
            self._lines = lines
            self._cached = None
            self._invalidate()

    def set_queues(self, steering: Sequence[str], follow_up: Sequence[str], dequeue_hint: str) -> None:
        """The same from the two queues' texts (steering first, as the runtime delivers them)."""
        messages = [PendingMessage("steering", t) for t in steering] + [
            PendingMessage("followUp", t) for t in follow_up
        ]
        self.set_messages(messages, dequeue_hint)

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """One row per line."""
        return len(self._lines)

    def render(self, size: Size, focus: bool = False) -> urwid.CompositeCanvas:
        """Dim lines cut with an ellipsis at the width."""
        width = flow_width(size)
        if self._cached is not None and self._cached[0] == width:
            return self._cached[1]
        if not self._lines:
            canvas = blank(width, 0)
        else:
            canvas = stack([text_canvas(("dim", line), width, wrap="ellipsis") for line in self._lines])
        self._cached = (width, canvas)
        return canvas
