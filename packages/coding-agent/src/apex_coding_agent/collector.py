"""When the cyclic garbage collector runs: paused for bulk loads and while a CLI process starts up.

Loads (a CLI's start-up, reading a long session) allocate long-lived, acyclic objects and almost no garbage, yet
the collector walks the young objects every few hundred allocations and, now and then, the whole growing heap.
`collector_paused` pauses it for such a block and can freeze what the block loaded afterwards, so that later full
collections skip it.

The start-up pause:

Start-up creates hundreds of thousands of long-lived objects (module dicts, pydantic model classes; the
anthropic SDK alone defines ~2,400 models) and almost no garbage, yet every few hundred allocations the
collector walks the young objects and, now and then, the whole heap. Pausing it cuts about a tenth of the CPU
time of importing a provider SDK (`benchmarks/bench_cli_startup.py` prints the figures).

Once the provider's SDK is imported, `gc.freeze()` moves everything alive into the permanent generation, so
later full collections in a long RPC or print run skip the start-up objects, and then collection resumes.
Only the process entry of the console script pauses collection: a caller of `main(argv)` (tests, embedding)
owns its interpreter's collector.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_paused = False


@contextmanager
def collector_paused(pause: bool = True, *, freeze: bool = False) -> Iterator[None]:
    """Pause the collector for the block when `pause` and it is running, and turn it back on afterwards (on an
    error too); with `freeze`, first move everything alive into the permanent generation (`gc.freeze`).

    A collector already paused by the caller stays paused and nothing is frozen: the pause is theirs.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()  # relinks lists only: cheap, and later full collections skip what the block loaded
        gc.enable()


def pause_collection() -> None:
    """Disable the collector for start-up; `resume_collection_after_import` turns it back on."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collection_after_import(api: str | None) -> None:
    """Resume collection once the stream function of `api` (and its SDK) is imported; at once for no `api`.

    Returns at once: the wait runs in a daemon thread, which joins the preload `preload_api` started (or does
    the import itself). A failed import is not this thread's to report: the first request meets it again.
    """
    if not _paused:
        return
    if api is None:
        _resume()
        return
    threading.Thread(target=_resume_after, args=(api,), name="apex-gc-resume", daemon=True).start()


def _resume_after(api: str) -> None:
    from apex_ai.api_registry import get_api

    try:
        get_api(api)
    except Exception:
        pass  # reported by the request that needs it; collection must come back either way
    finally:
        _resume()


def _resume() -> None:
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


__all__ = ["collector_paused", "pause_collection", "resume_collection_after_import"]
