"""Work the app does for a long session (issue 7), counted in blocks created and laid out rather than timed.

A session written with the `SessionManager` API is opened by the real app: block objects exist only for the newest
messages, the first frame shows the newest ones and lays out only the blocks on screen; typing into the editor
re-lays out no transcript block; scrolling up near the oldest loaded block adds older blocks above without moving
the view; jumping to the top and transcript search turn every older message into blocks.
"""

from pathlib import Path

from app_helpers import open_app_on_file, write_long_session

from apex_tui.app import InteractiveApp
from apex_tui.app._history import CHUNK_MESSAGES, INITIAL_MESSAGES
from apex_tui.widgets import ToolCallBlock

SIZE = (100, 30)
ENTRIES = 1500
MAX_VISIBLE_BLOCKS = 15
"""More than a 30-row screen can show of these messages (each takes at least 2 rows)."""


def write_session(directory: Path, entries: int) -> Path:
    return write_long_session(directory, entries)


async def open_app(root: Path, session_file: Path, *, fullscreen: bool = False) -> InteractiveApp:
    return await open_app_on_file(root, session_file, fullscreen=fullscreen)


def frame(app: InteractiveApp) -> str:
    canvas = app.root.render(SIZE, focus=True)
    return "\n".join(row.decode("utf-8") for row in canvas.text)


def builds(app: InteractiveApp) -> int:
    return sum(block.builds for block in app.transcript.walker)


def questions(app: InteractiveApp) -> list[int]:
    """The numbers of the user questions that have blocks, in transcript order."""
    found: list[int] = []
    for block in app.transcript.walker:
        text = block.search_text()
        if text.startswith("question "):
            found.append(int(text.split()[1].rstrip(":")))
    return found


async def test_a_long_session_opens_with_blocks_for_its_newest_messages_only(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    screen = frame(app)
    newest = 3 * ((ENTRIES - 1) // 3)
    assert f"question {newest}: why?" in screen
    assert "question 0: why?" not in screen
    # Each assistant message and its tool result share one tool block: about two blocks per three messages.
    assert len(app.transcript) <= INITIAL_MESSAGES + 2
    assert app.history.remaining == ENTRIES - INITIAL_MESSAGES
    assert questions(app) == [n for n in range(0, ENTRIES, 3) if n >= ENTRIES - INITIAL_MESSAGES]
    assert 0 < builds(app) <= MAX_VISIBLE_BLOCKS
    await app.runtime.dispose()


async def test_typing_re_lays_out_no_transcript_block(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    frame(app)
    before = builds(app)
    typed = ""
    for char in "hello there":
        app.root.keypress(SIZE, char)
        typed += char
        assert typed in frame(app)
    assert app.editor.text == "hello there"
    assert builds(app) == before
    await app.runtime.dispose()


async def test_paging_up_near_the_oldest_block_adds_older_blocks_above_without_moving_the_view(
    tmp_path: Path,
) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES))
    frame(app)
    loaded = len(app.transcript)
    pages = 0
    while app.history.remaining == ENTRIES - INITIAL_MESSAGES:
        app.root.keypress(SIZE, "page up")  # tui.editor.pageUp: nothing to scroll in the editor → transcript
        index, inset = app.transcript.top_anchor()
        top_block = app.transcript.walker[index]
        frame(app)  # loads the chunk before it draws
        pages += 1
        assert pages < 200, "paging up never loaded older history"
    # A chunk boundary moves back past tool results (at most two messages here).
    remaining = app.history.remaining
    assert ENTRIES - INITIAL_MESSAGES - CHUNK_MESSAGES - 2 <= remaining <= ENTRIES - INITIAL_MESSAGES - CHUNK_MESSAGES
    assert len(app.transcript) > loaded
    # The same row of the same block is still on top, now further down the block list.
    new_index, new_inset = app.transcript.top_anchor()
    assert app.transcript.walker[new_index] is top_block
    assert (new_index > index, new_inset) == (True, inset)
    assert questions(app)[0] == -(-remaining // 3) * 3  # the first question at or after the boundary
    await app.runtime.dispose()


async def test_home_loads_every_older_message_and_shows_the_first_one(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES), fullscreen=True)
    frame(app)
    before = builds(app)
    app.root.keypress(SIZE, "home")  # tui.altScreen.top
    screen = frame(app)
    assert "question 0: why?" in screen
    assert app.history.remaining == 0
    assert questions(app) == list(range(0, ENTRIES, 3))
    # Chunk boundaries never separate a tool result from its call: every tool block shows its result.
    tools = [block for block in app.transcript.walker if isinstance(block, ToolCallBlock)]
    assert len(tools) == ENTRIES // 3 and all(block.status != "pending" for block in tools)
    assert 0 < builds(app) - before <= MAX_VISIBLE_BLOCKS
    middle = len(app.transcript) // 2
    assert app.transcript.walker[middle].builds == 0
    await app.runtime.dispose()


async def test_search_finds_a_message_that_had_no_block_when_it_opened(tmp_path: Path) -> None:
    app = await open_app(tmp_path, write_session(tmp_path / "s", ENTRIES), fullscreen=True)
    frame(app)
    app.root.keypress(SIZE, "ctrl F")  # tui.altScreen.search
    for char in "question 3: why":
        app.root.keypress(SIZE, char)
    screen = frame(app)
    assert "1/1" in screen
    assert "question 3: why?" in screen
    await app.runtime.dispose()
