"""Loading a session while the app runs: the collector pauses, and what was loaded is frozen afterwards.

Opening a long session (`/resume`, `/import`) builds an object graph per message and almost no garbage. With the
collector running, its collections walk that growing graph again and again (about a quarter of the load time of a
50k-entry session), and once loaded, every later full collection walks it again while a reply streams (a pause of
~0.5 s). Freezing the loaded objects takes them out of the collector's way, as `freeze_startup_heap` does at start.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def session_load() -> Iterator[None]:
    """Pause collection for the body; afterwards freeze what is alive and resume (if it was running before)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()


__all__ = ["session_load"]
