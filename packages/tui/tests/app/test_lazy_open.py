"""Opening a long session with deferred context messages: the first frame needs only the newest ones.

The real app over a real runtime (faux provider) whose session was built with `defer_messages`, as the app's
startup builds it. The first frame shows the newest messages while the rest are still unprojected; after it, the
app completes them in slices on the event loop, and the agent, the older history blocks, the editor history and the
footer figures all come out as they do for an eagerly built session.
"""

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_helpers import open_app_on_file
from test_perf_open import ENTRIES, questions, write_session
from urwid.testing import ScriptedScreen

from apex_tui.app import InteractiveApp
from apex_tui.app._history import INITIAL_MESSAGES

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _collect_sessions() -> Iterator[None]:
    yield
    gc.collect()


async def open_app(root: Path, session_file: Path, *, defer: bool) -> InteractiveApp:
    return await open_app_on_file(root, session_file, defer=defer)


class FrameScreen(ScriptedScreen):
    """Notes, at every draw, the screen text and whether the session's messages were still deferred."""

    def __init__(self, app: InteractiveApp) -> None:
        super().__init__(size=SIZE, inputs=[[] for _ in range(200)])
        self.app = app
        self.frames: list[tuple[bool, str]] = []

    def draw_screen(self, size: tuple[int, int], canvas: Any) -> None:
        # Any: urwid's Canvas; only its text rows are read.
        super().draw_screen(size, canvas)
        text = "\n".join(row.decode("utf-8") for row in canvas.text)
        self.frames.append((self.app.session.deferred_messages is not None, text))


async def run_until_loaded(app: InteractiveApp, screen: FrameScreen) -> None:
    main_loop = app.make_main_loop(screen, asyncio.get_running_loop())
    main_loop.start()
    try:
        for _ in range(500):
            await asyncio.sleep(0.002)
            if app.session.deferred_messages is None and app.stats_reads and not app._stats_due:
                break
        await asyncio.sleep(0.05)  # the redraw after the footer figures
    finally:
        main_loop.stop()


async def test_the_first_frame_shows_the_newest_messages_before_the_rest_is_projected(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s", ENTRIES)
    eager = await open_app(tmp_path / "eager", path, defer=False)
    expected_messages = eager.session.messages
    expected_history = list(eager.editor.history.entries)
    eager.update_footer()
    expected_input = eager.footer.state.input_tokens
    await eager.runtime.dispose()
    eager.session.session_manager.close()

    app = await open_app(tmp_path / "lazy", path, defer=True)
    assert app.session.deferred_messages is not None
    assert app.editor.history.entries == expected_history  # from the newest messages only
    screen = FrameScreen(app)
    await run_until_loaded(app, screen)

    deferred_at_first, first = screen.frames[0]
    newest = 3 * ((ENTRIES - 1) // 3)
    assert deferred_at_first
    assert f"question {newest}: why?" in first
    assert app.session.deferred_messages is None
    assert app.session.messages == expected_messages
    assert app.stats_reads == 1 and app.footer.state.input_tokens == expected_input
    # The older history comes from the same projection: every question, in order, once scrolled to the top.
    assert app.history.remaining == ENTRIES - INITIAL_MESSAGES
    app.load_history()
    assert questions(app) == list(range(0, ENTRIES, 3))
    await app.runtime.dispose()


async def test_history_asked_for_before_the_slices_finish_is_complete(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s", ENTRIES)
    app = await open_app(tmp_path, path, defer=True)
    assert app.session.deferred_messages is not None
    app.load_history()  # the Home key right away: the older messages are projected at once
    assert questions(app) == list(range(0, ENTRIES, 3))
    assert len(app.session.messages) == ENTRIES
    assert app.session.deferred_messages is None
    await app.runtime.dispose()
