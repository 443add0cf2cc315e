"""A 5,000-message session in the real app: the transcript lays out only what is on screen, older history arrives
as the view scrolls up, and what it shows is exactly what an eagerly built transcript shows.

The session is written with the `SessionManager` API and opened by a real session runtime (faux provider); work is
counted (`TranscriptView.built_blocks`, `LazyHistory.remaining`), never timed.
"""

import asyncio
import re
from pathlib import Path

import pytest
from app_helpers import open_app_on_file, write_long_session
from urwid.testing import ScriptedScreen

from apex_tui.app import InteractiveApp
from apex_tui.app._feed import TranscriptFeed
from apex_tui.app._sessions_flow import resume
from apex_tui.widgets import RenderContext, TranscriptView

ENTRIES = 5000
WALKED_ENTRIES = 900
"""The session walked to its top page by page and rendered in full twice: four chunks of older history, small
enough that laying out every block twice stays quick."""
WIDTH = 100
SIZE = (WIDTH, 30)
TALL = (WIDTH, 400)
"""A tall terminal for walking the whole transcript: fewer frames, the same lazy loading."""
MAX_BUILT = 20
"""More blocks than a 30-row frame can show of these messages (every block takes at least two rows)."""
QUESTION = re.compile(r"question (\d+): ")


def write_session(directory: Path, entries: int = ENTRIES) -> Path:
    """Prompts, replies with a tool call (one in five with a fenced code block) and tool results, in turn."""
    return write_long_session(directory, entries, code_every=5)


async def open_app(root: Path, session_file: Path, *, fullscreen: bool = False) -> InteractiveApp:
    return await open_app_on_file(
        root, session_file, settings={"quietStartup": True}, quiet=True, fullscreen=fullscreen
    )


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 5,000-entry session, written once for the tests that only open it (each app releases it on dispose)."""
    return write_session(tmp_path_factory.mktemp("big"))


def frame(app: InteractiveApp, size: tuple[int, int] = SIZE) -> str:
    canvas = app.root.render(size, focus=True)
    return "\n".join(row.decode("utf-8") for row in canvas.text)


def transcript_rows(view: TranscriptView, start: int = 0) -> list[str]:
    """Every row of every block from `start` on, at WIDTH columns, top to bottom."""
    rows: list[str] = []
    for index in range(start, len(view)):
        rows.extend(row.decode("utf-8") for row in view.walker[index].render((WIDTH,)).text)
    return rows


def eager_rows(messages: list[object]) -> list[str]:
    """The rows of a transcript that turned every message into a block at once."""
    ctx = RenderContext()
    view = TranscriptView(ctx)
    feed = TranscriptFeed(view, ctx)
    for message in messages:
        feed.add_message(message)
    return transcript_rows(view)


def scroll_to_first_question(app: InteractiveApp) -> list[int]:
    """Page up in a tall frame until question 0 is on screen; the question numbers seen, in order of appearance."""
    seen: list[int] = []
    screen = frame(app, TALL)
    for _page in range(200):
        numbers = [int(n) for n in QUESTION.findall(screen)]
        seen.extend(n for n in reversed(numbers) if not seen or n < seen[-1])
        if "question 0: why?" in screen:
            return seen
        app.root.keypress(TALL, "page up")  # tui.editor.pageUp: the editor has nothing to scroll → transcript
        screen = frame(app, TALL)
    raise AssertionError(f"paging up never reached question 0 (last seen {seen[-1:]})")


async def test_the_first_frame_lays_out_a_bounded_number_of_blocks(tmp_path: Path, big_session: Path) -> None:
    app = await open_app(tmp_path, big_session)
    assert app.transcript.built_blocks == 0
    screen = frame(app)
    newest = 3 * ((ENTRIES - 1) // 3)
    assert f"question {newest}: why?" in screen and f"answer {ENTRIES - 1}: the parser" in screen
    assert 0 < app.transcript.built_blocks <= MAX_BUILT
    # Only the newest messages became block objects; the others wait for the view to come near them.
    assert len(app.transcript) < 300 and app.history.remaining > ENTRIES - 300
    # Drawing again (a keypress, a spinner tick) lays out nothing new.
    built = app.transcript.built_blocks
    app.root.keypress(SIZE, "x")
    frame(app)
    assert app.transcript.built_blocks == built
    await app.runtime.dispose()


async def test_paging_up_reaches_the_first_message_and_renders_exactly_like_an_eager_transcript(
    tmp_path: Path,
) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", WALKED_ENTRIES))
    assert app.history.remaining > 0
    seen = scroll_to_first_question(app)
    # Every question showed on the way up, newest to oldest, none skipped or repeated.
    assert seen == list(range(3 * ((WALKED_ENTRIES - 1) // 3), -1, -3))
    assert app.history.remaining == 0
    assert app.transcript.top_anchor() == (0, 0)
    assert any("question 0: why?" in row for row in app.transcript.block_rows(0))
    # Spliced in chunk by chunk, the transcript is row for row the one that built every message at once.
    lazy = transcript_rows(app.transcript, app.history.head)
    eager = eager_rows(list(app.session.messages))
    assert len(lazy) == len(eager) > WALKED_ENTRIES
    assert lazy == eager
    await app.runtime.dispose()


async def test_home_and_search_reach_messages_that_had_no_block_at_open(tmp_path: Path, big_session: Path) -> None:
    # tui.altScreen.* keys (home, search) act in fullscreen mode.
    app = await open_app(tmp_path, big_session, fullscreen=True)
    frame(app)
    assert "question 3: why?" not in "\n".join(block.search_text() for block in app.transcript.walker)
    app.root.keypress(SIZE, "ctrl F")  # tui.altScreen.search
    for char in "question 3: why":
        app.root.keypress(SIZE, char)
    screen = frame(app)
    assert "1/1" in screen and "question 3: why?" in screen
    app.root.keypress(SIZE, "esc")
    app.root.keypress(SIZE, "home")  # tui.altScreen.top
    screen = frame(app)
    assert "question 0: why?" in screen
    assert app.transcript.top_anchor() == (0, 0)
    await app.runtime.dispose()


async def test_resume_opens_a_long_session_lazily_after_a_frame_saying_so(tmp_path: Path, big_session: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "small", 4))
    screen = ScriptedScreen(size=SIZE)
    main_loop = app.make_main_loop(screen, asyncio.get_running_loop())
    # Each frame the loop draws, with the session file the runtime had while drawing it.
    frames: list[tuple[str | None, str]] = []
    draw = main_loop.draw_screen

    def recorded() -> None:
        draw()
        frames.append((app.session.session_file, "\n".join(str(row) for row in screen.last_text)))

    main_loop.draw_screen = recorded  # type: ignore[method-assign]
    main_loop.start()
    try:
        before = app.session.session_file
        await resume(app, str(big_session))
    finally:
        main_loop.stop()
    assert any(file == before and "Opening session…" in text for file, text in frames)
    assert app.session.session_file == str(big_session)
    screen_text = frame(app)
    assert "Resumed session" in screen_text and "Opening session…" not in screen_text
    assert f"answer {ENTRIES - 1}: the parser" in screen_text
    assert 0 < app.transcript.built_blocks <= MAX_BUILT
    assert app.history.remaining > ENTRIES - 300
    await app.runtime.dispose()
