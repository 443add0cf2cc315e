"""Log records become transcript warnings while the app owns the terminal.

The libraries log what they skip or survive: a corrupt session line, a subscriber that raised, an extension
error. Without a handler Python prints such records on stderr, which is the terminal urwid is drawing on: the
text lands in the middle of the screen and is gone at the next redraw. While the app runs, a handler on the root
logger turns every record of level WARNING and above into a warning line in the transcript instead. Records from
before the app exists (the session is read during start-up) wait and are shown once it does; records the app
never showed are written to stderr after the terminal is restored.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from apex_coding_agent import record_text

if TYPE_CHECKING:
    from collections.abc import Callable

    Notify = Callable[[str, str], None]
    """Shows a text of a kind (`"warning"`) in the transcript: the app's `notify`."""


class TranscriptLogHandler(logging.Handler):
    """Sends records to an app's transcript (through its event loop: records may come from any thread).

    It needs only the app's `notify`, not the app."""

    def __init__(self, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self._notify: Notify | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.pending: list[str] = []
        """Texts not handed to an app yet."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record_text(record)  # worded as the CLI words it on stderr, without the prefix
        except Exception:
            self.handleError(record)
            return
        with self.lock_held():
            notify, loop = self._notify, self._loop
            if notify is None or loop is None or loop.is_closed():
                self.pending.append(text)
                return
        # Never inline: a record may be logged while the app is drawing, or from another thread.
        loop.call_soon_threadsafe(notify, text, "warning")

    @contextmanager
    def lock_held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def attach(self, notify: Notify, loop: asyncio.AbstractEventLoop) -> None:
        """Show the waiting texts with `notify` and send later records there, on `loop`."""
        with self.lock_held():
            self._notify, self._loop = notify, loop
            waiting, self.pending = self.pending, []
        for text in waiting:
            loop.call_soon_threadsafe(notify, text, "warning")

    def detach(self) -> None:
        """Stop sending to the app (its loop is about to stop): later records wait in `pending` again."""
        with self.lock_held():
            self._notify = self._loop = None

    def take_pending(self) -> list[str]:
        with self.lock_held():
            waiting, self.pending = self.pending, []
        return waiting


@contextmanager
def transcript_logging() -> Iterator[TranscriptLogHandler]:
    """Install a `TranscriptLogHandler` on the root logger for the block; what no app showed goes to stderr."""
    handler = TranscriptLogHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        handler.detach()
        for text in handler.take_pending():
            sys.stderr.write(f"{text}\n")


__all__ = ["TranscriptLogHandler", "transcript_logging"]
