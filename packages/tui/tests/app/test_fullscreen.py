"""Fullscreen extras through the real app (tui.md §2): transcript search, selection copy with the `Copied!` flash,
link clicks, the scrollbar; plus the startup blocks, image placeholders and OSC 8 links on a real terminal screen."""

import base64
import os
import select
import struct
import zlib
from pathlib import Path

import pytest
import urwid
from app_helpers import SIZE, AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.types import ImageContent
from apex_tui.app._clipboard import osc52
from apex_tui.app._screen import AppScreen, supports_hyperlinks
from apex_tui.theme import builtin_theme
from apex_tui.widgets import AssistantTextBlock, LinkStyle, UserMessageBlock


def png_bytes(width: int, height: int) -> bytes:
    """A valid RGB PNG of `width` x `height` black pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x00" * 3 * width for _ in range(height)))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def png(width: int, height: int) -> str:
    """The same, base64 encoded."""
    return base64.b64encode(png_bytes(width, height)).decode()


def transcript_attrs(harness: AppHarness) -> set[object]:
    app = harness.running
    rows = app.root._transcript_size(SIZE)[1]
    canvas = app.transcript.render((SIZE[0], rows))
    return {attr for row in canvas.content() for attr, _cs, _text in row}


async def test_search_box_counts_moves_highlights_follows_output_and_closes(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("the needle is here"), faux_assistant_message("another needle arrives"))
    app = await harness.start(fullscreen=True)
    harness.type("find the needle")
    harness.press("enter")
    await harness.settle()
    for index in range(60):
        app.feed.add(UserMessageBlock(app.ctx, f"filler {index}"))
    harness.screen()
    assert app.transcript.following

    harness.press("ctrl F")  # tui.altScreen.search
    assert app.root.search_box is not None
    harness.type("needle")
    text = harness.text()
    assert "Search: needle" in text and "2/2" in text
    assert app.editor.text == ""  # the box has the keys
    assert not app.transcript.following and "the needle is here" in text  # the current match is scrolled in
    assert "search.current" in transcript_attrs(harness)
    harness.press("enter")  # searchNext wraps to the first match
    assert "1/2" in harness.text() and "find the needle" in harness.text()
    harness.press("shift enter")
    assert "2/2" in harness.text()

    await app.session.prompt("one more needle")  # new output while the box is open: the count follows
    await harness.settle()
    assert "/4" in harness.text()

    harness.press("esc")
    assert app.root.search_box is None and "Search:" not in harness.text()
    assert "search.current" not in transcript_attrs(harness)
    harness.type("x")
    assert app.editor.text == "x"


async def test_drag_selection_is_copied_with_osc52_and_flashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no clipboard tool: OSC 52 to the terminal
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=True)
    app.feed.add(UserMessageBlock(app.ctx, "copy this line"))
    rows = harness.screen()
    row = next(i for i, line in enumerate(rows) if "copy this line" in line)
    col = rows[row].index("copy this line")
    root = app.root
    assert root.mouse_event(SIZE, "mouse press", 1, col, row, True)
    root.mouse_event(SIZE, "mouse drag", 1, col + len("copy this line") - 1, row, True)
    root.mouse_event(SIZE, "mouse release", 0, col + len("copy this line") - 1, row, True)
    assert osc52("copy this line") in capsys.readouterr().out
    assert "Copied!" in harness.text()
    assert app.transcript.selection is None


async def test_without_copy_on_select_the_copy_key_copies_the_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=True, settings={"fullscreenCopyOnSelect": False})
    app.feed.add(UserMessageBlock(app.ctx, "keep me selected"))
    rows = harness.screen()
    row = next(i for i, line in enumerate(rows) if "keep me selected" in line)
    col = rows[row].index("keep")
    app.root.mouse_event(SIZE, "mouse press", 1, col, row, True)
    app.root.mouse_event(SIZE, "mouse drag", 1, col + 3, row, True)
    app.root.mouse_event(SIZE, "mouse release", 0, col + 3, row, True)
    assert capsys.readouterr().out == "" and app.transcript.selection is not None
    harness.press("ctrl x")  # app.message.copy
    assert osc52("keep") in capsys.readouterr().out
    assert "Copied!" in harness.text() and app.transcript.selection is None


async def test_link_click_without_an_opener_shows_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=True)
    app.ctx.markdown.set_hyperlinks(True)  # what make_main_loop does for a screen with OSC 8 support
    block = AssistantTextBlock(app.ctx)
    block.set_text("Read [the docs](https://example.com/docs) first.")
    app.feed.add(block)
    rows = harness.screen()
    row = next(i for i, line in enumerate(rows) if "the docs" in line)
    col = rows[row].index("the docs") + 2
    app.root.mouse_event(SIZE, "mouse press", 1, col, row, True)
    app.root.mouse_event(SIZE, "mouse release", 0, col, row, True)
    assert "Link: https://example.com/docs" in harness.text()


async def test_scrollbar_follows_the_setting_in_fullscreen_only(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=True, settings={"fullscreenScrollbar": "always"})
    assert app.transcript.scrollbar == "always" and app.transcript.mouse_select
    rows = harness.screen()
    assert rows[0][-1] in "┃│"
    (tmp_path / "regular").mkdir()
    regular = await AppHarness(tmp_path / "regular").start(settings={"fullscreenScrollbar": "always"})
    assert regular.transcript.scrollbar == "hidden" and not regular.transcript.mouse_select


async def test_wheel_over_the_dock_scrolls_the_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(fullscreen=True)
    for index in range(80):
        app.feed.add(UserMessageBlock(app.ctx, f"line {index}"))
    harness.screen()
    assert app.root.mouse_event(SIZE, "mouse press", 4, 5, SIZE[1] - 2, True)
    assert not app.transcript.following


async def test_header_resources_and_image_placeholders(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.cwd / "AGENTS.md").write_text("Be brief.")
    (harness.agent_dir / "prompts").mkdir()
    (harness.agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $@")
    skill = harness.agent_dir / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linters\n---\nRun ruff.")
    (harness.cwd / "shot.png").write_bytes(png_bytes(64, 48))
    harness.script(
        faux_assistant_message("seen"),
        faux_assistant_message(faux_tool_call("read", {"path": "shot.png"}), stop_reason="toolUse"),
        faux_assistant_message("done"),
    )
    app = await harness.start()
    text = harness.text()
    assert "apex-code v0.0.test" in text and "faux/faux-1" in text
    assert "[Context] AGENTS.md" in text
    assert "[Skills] lint" in text and "[Prompts] /review" in text

    harness.type("/")
    labels = [s.label for s in app.editor.suggestions]
    harness.type("rev")
    assert "/review" in [s.label for s in app.editor.suggestions]
    app.editor.set_text("")
    harness.type("/skill:li")
    assert "/skill:lint" in [s.label for s in app.editor.suggestions]
    assert "/model" in labels
    app.editor.set_text("")

    await app.session.prompt("look", images=[ImageContent(data=png(2, 3), mime_type="image/png")])
    await harness.settle()
    harness.type("show me")
    harness.press("enter")
    await harness.settle()
    text = harness.text()
    assert "[image #1: image/png 2x3]" in text and "[image #1: image/png 64x48]" in text


def test_hyperlink_support_is_detected_from_the_environment() -> None:
    assert supports_hyperlinks({"TERM_PROGRAM": "WezTerm"})
    assert supports_hyperlinks({"TERM": "xterm-kitty"})
    assert supports_hyperlinks({"VTE_VERSION": "7200"})
    assert not supports_hyperlinks({"TERM": "xterm-256color"})
    assert not supports_hyperlinks({"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-0/default,1,0"})


def test_the_screen_writes_osc8_around_link_runs_on_a_real_terminal() -> None:
    master, slave = os.openpty()
    with open(slave, closefd=False) as term_in, open(slave, "w", encoding="utf-8", closefd=False) as term_out:
        screen = AppScreen(fullscreen=True, hyperlinks=True, input=term_in, output=term_out)
        screen.register_palette(builtin_theme("dark").palette())
        screen.start()
        try:
            markup = [("text", "see "), (LinkStyle("md.link", "https://example.com/a"), "docs"), ("text", " now")]
            canvas = urwid.Text(markup).render((20,))
            screen.draw_screen((20, 1), canvas)
        finally:
            screen.stop()
    written = b""
    while select.select([master], [], [], 0.05)[0]:
        chunk = os.read(master, 65536)
        if not chunk:
            break
        written += chunk
    os.close(master)
    os.close(slave)
    out = written.decode("utf-8", "replace")
    opened = out.index("\x1b]8;;https://example.com/a\x1b\\")
    assert out.index("docs", opened) > opened
    assert "\x1b]8;;\x1b\\" in out[opened + 10 :]  # closed after the link run
