"""tmux end to end, the terminal side (tui.md acceptance 15-18, keybindings.md 11, 13-15): screen modes, scrolling,
suspend and resume from job control, the external editor, bad keybindings, modified keys as raw bytes."""

import json
import re
import stat
import sys
import time
from pathlib import Path

from tmux_helpers import PROMPT, TmuxApp, strip_sgr, visible_cells, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

CTRL_SHIFT_UP = b"\x1b[1;6A"
SHIFT_ENTER = b"\x1b[13;2u"


def code_reply(prefix: str, count: int, **extra: object) -> dict[str, object]:
    """A reply whose text is a fenced block of `count` numbered rows (`<prefix> 001` ...), one row per line."""
    rows = "\n".join(f"{prefix} {n:03d}" for n in range(1, count + 1))
    return {"text": f"```\n{rows}\n```", **extra}


RULE = "─" * 40


def transcript_rows(screen: str) -> list[str]:
    """The transcript's rows: those above the dock (a status line such as `Working...`, then the editor's rule).

    The dock grows by the status row while the agent works; a comparison across that change uses the top rows.
    """
    rows = screen.split("\n")
    end = next((i for i, row in enumerate(rows) if row.startswith(RULE)), len(rows))
    if end and "Working..." in rows[end - 1]:
        end -= 1
    return rows[:end]


def editor_text(screen: str) -> str:
    """The rows between the editor's two rules."""
    rows = screen.split("\n")
    first = next(i for i, row in enumerate(rows) if row.startswith(RULE))
    last = next(i for i in range(first + 1, len(rows)) if rows[i].startswith(RULE))
    return "\n".join(rows[first + 1 : last])


def texts(screen: str) -> list[str]:
    """The transcript's non-blank rows, stripped, top first."""
    return [row.strip() for row in transcript_rows(screen) if row.strip()]


def top(screen: str, count: int = 30) -> list[str]:
    return transcript_rows(screen)[:count]


def setup(tmp_path: Path) -> tuple[Path, Path]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd, tmp_path / "agent"


def test_fullscreen_page_keys_follow_rules_and_previous_prompt_jump(tmp_path: Path) -> None:
    """tui.md 15, keybindings.md 15."""
    cwd, agent_dir = setup(tmp_path)
    scenario = [code_reply("first", 200), code_reply("second", 40, delay_ms=20), {"text": "ok", "repeat": True}]
    with ScriptedModelServer(scenario) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=("--tui-mode", "fullscreen"))
        try:
            app.wait_for("fake-model")
            assert app.alternate_on()
            app.type("show me")
            app.keys("Enter")
            # Settled first: when the run ends the dock loses its status row and the transcript gains a row at the
            # top, which must not be mistaken for the page scroll below.
            bottom = app.wait_until(lambda s: "first 200" in s and "Working" not in s, "first reply settled")
            app.keys("PPage")
            # Waited for as a whole: a capture taken while the terminal is still drawing the page may show the top
            # row changed before the bottom one (seen on a loaded machine).
            app.wait_until(
                lambda s: transcript_rows(s)[0] != transcript_rows(bottom)[0] and "first 200" not in s,
                "PPage scrolled a page up",
            )
            app.keys("End")
            app.wait_until(lambda s: transcript_rows(s) == transcript_rows(bottom), "End back at the bottom")

            # A reply streaming while the view is scrolled up never moves it.
            app.type("more please")
            app.keys("Enter")
            app.wait_for("second 001")
            app.keys("PPage")
            held = app.wait_until(lambda s: "second" not in "".join(transcript_rows(s)[-3:]), "scrolled up")
            # Until the stream ends (the dock's `Working...` line goes), every capture shows the same rows.
            held_rows = top(held)
            deadline = time.monotonic() + 15
            while "Working" in (screen := app.capture()):
                assert top(screen) == held_rows
                assert time.monotonic() < deadline, "the second reply never finished"
                time.sleep(0.05)
            app.keys("End")
            app.wait_for("second 040")
            # Following again: the next reply appears at the bottom without a key.
            app.type("again")
            app.keys("Enter")
            app.wait_until(lambda s: "ok" in transcript_rows(s)[-2:] or " ok" in "".join(transcript_rows(s)[-3:]), "ok")

            # ctrl+shift+up (raw CSI) brings the start of the previous message above the top row to the top row:
            # the second reply (the newer messages were on screen), then the user message before it.
            app.hex_keys(CTRL_SHIFT_UP)
            # (a block starts with blank spacing rows, a code block with its fence: compare the first text rows)
            app.wait_until(lambda s: texts(s)[:2] == ["```", "second 001"], "the second reply at the top row")
            app.hex_keys(CTRL_SHIFT_UP)
            app.wait_until(lambda s: texts(s)[0] == "more please", "the user message at the top row")
        finally:
            app.close()


def test_regular_mode_stays_in_the_main_buffer_and_page_up_scrolls_the_transcript(tmp_path: Path) -> None:
    """tui.md 18."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([code_reply("row", 80), {"text": "ok", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, interactive_shell=True)
        try:
            app.wait_for("fake-model")
            assert not app.alternate_on()
            assert f"{PROMPT} {sys.executable} -m apex_coding_agent.cli" in app.history()
            app.type("list rows")
            app.keys("Enter")
            bottom = app.wait_for("row 080")
            app.keys("PPage")
            scrolled = app.wait_until(lambda s: "row 080" not in s, "PPage scrolled the transcript")
            assert transcript_rows(scrolled) != transcript_rows(bottom)
            assert "fake-model" in scrolled  # the dock stays
        finally:
            app.close()


def test_ctrl_z_returns_to_the_shell_and_fg_redraws_the_same_screen(tmp_path: Path) -> None:
    """tui.md 16."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([{"text": "Before the suspend.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, interactive_shell=True)
        try:
            app.wait_for("fake-model")
            app.type("hello")
            app.keys("Enter")
            app.wait_for("Before the suspend.")
            app.type("draft text")
            before = app.wait_for("draft text")
            app.keys("C-z")
            stopped = app.wait_until(
                lambda s: re.search(r"Stopped.*\n" + PROMPT, s) is not None, "shell prompt after C-z"
            )
            assert "fake-model" not in stopped.split("Stopped")[1]
            app.type("fg")
            app.keys("Enter")
            after = app.wait_until(lambda s: s == before, "the same screen after fg")
            assert "draft text" in after
            # Still alive and reading keys: the typed text is the editor's.
            app.keys("C-c")
            app.wait_until(lambda s: "draft text" not in s, "C-c cleared the editor after resume")
        finally:
            app.close()


def test_alt_l_repaints_what_another_program_wrote_over_the_app(tmp_path: Path) -> None:
    """`app.redraw`: text, colours and the line-drawing character set written to the pane's terminal from outside
    (tmux `send-keys` cannot, it only types) are gone after the key, and the screen is the app's again."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([{"text": "Answer before the mess.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            app.type("hello")
            app.keys("Enter")
            app.wait_for("Answer before the mess.")
            app.type("draft text")
            app.wait_for("draft text")
            before, cursor = app.settled(), app.cursor()
            tty = app.tmux("display-message", "-p", "-t", app.name, "#{pane_tty}").strip()
            with open(tty, "w") as out:
                out.write("\x1b[3;5Hgarbage-one\x1b[31;44m\x1b[20;30Hgarbage-two\x1b(0\x1b[10;10Hqqqq lettered")
            app.wait_until(lambda s: "garbage-two" in s, "the other program's output on the pane")
            app.keys("M-l")
            app.wait_until(lambda s: "garbage" not in s and "lettered" not in s, "the screen after alt+l")
            after = app.settled()
            assert visible_cells(after) == visible_cells(before), strip_sgr(after)
            assert app.cursor() == cursor
            app.keys("Enter")  # still reading keys; the draft is sent as it was typed
            app.wait_until(lambda s: s.count("Answer before the mess.") == 2, "the second answer")
        finally:
            app.close()


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_ctrl_g_edits_the_prompt_in_visual(tmp_path: Path) -> None:
    """tui.md 17: `$VISUAL` (before `$EDITOR`) gets the text in a file; what it saves replaces the editor text."""
    cwd, agent_dir = setup(tmp_path)
    visual = write_script(tmp_path / "visual.sh", 'printf "%sX\\n" "$(cat "$1")" > "$1.new" && mv "$1.new" "$1"\n')
    editor = write_script(tmp_path / "editor.sh", 'printf "E" >> "$1"\n')
    with ScriptedModelServer([{"text": "Got it.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, env={"VISUAL": str(visual), "EDITOR": str(editor)})
        try:
            app.wait_for("fake-model")
            app.type("please edit")
            app.wait_for("please edit")
            app.keys("C-g")
            screen = app.wait_for("please editX")
            assert "please editXE" not in screen and "fake-model" in screen
            app.keys("Enter")
            app.wait_for("Got it.")
            assert "please editX" in json.dumps(server.requests[-1]["body"])
        finally:
            app.close()


def test_remapped_expand_key_ignores_the_old_key_until_reload(tmp_path: Path) -> None:
    """keybindings.md 11 and 12."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([{"text": "ok", "repeat": True}]) as server:
        write_models(agent_dir, server)
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "alt+o"}))
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            # If C-o still cycled (details -> all), M-o would then show `overview`.
            app.keys("C-o")
            app.keys("M-o")
            screen = app.wait_for("Conversation detail: all")
            assert "overview" not in screen
            (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "ctrl+o"}))
            app.type("/reload")
            app.keys("Enter")
            app.wait_for("Reloaded keybindings")
            app.keys("C-o")
            app.wait_for("Conversation detail: overview")
            app.type("/hotkeys")
            app.keys("Enter")
            screen = app.wait_for("Ctrl+O")
            assert "Alt+O" not in screen
        finally:
            app.close()


def test_bad_entries_warn_defaults_stay_and_line_break_keys(tmp_path: Path) -> None:
    """keybindings.md 13 and 14."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([{"text": "Two lines seen.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        (agent_dir / "keybindings.json").write_text(json.dumps({"bogus.id": "ctrl+x", "app.clear": "ctrl+nope"}))
        app = TmuxApp(cwd, agent_dir)
        try:
            screen = app.wait_for("fake-model")
            # (the test's tmux runs without extended-keys: the warning about that is not the keybindings')
            warnings = [line for line in screen.split("\n") if "Warning:" in line and "tmux" not in line]
            assert len(warnings) == 2, screen
            assert "bogus.id" in warnings[0] + warnings[1] and "ctrl+nope" in warnings[0] + warnings[1]
            app.type("to be cleared")
            app.wait_for("to be cleared")
            app.keys("C-c")
            app.wait_until(lambda s: "to be cleared" not in s, "C-c (default kept) cleared the editor")

            app.type("a")
            app.hex_keys(SHIFT_ENTER)
            app.type("b")
            app.keys("C-j")
            app.type("c")
            app.keys("Enter")
            app.wait_for("Two lines seen.")
            rows = [row.strip() for row in app.capture().split("\n")]
            start = rows.index("a")
            assert rows[start : start + 3] == ["a", "b", "c"]
            body = json.dumps(server.requests[-1]["body"])
            assert "a\\\\nb\\\\nc" in body or "a\\nb\\nc" in body
        finally:
            app.close()


def test_steer_while_streaming_then_escape_aborts(tmp_path: Path) -> None:
    """The issue's tmux list: steer while streaming, abort (tui.md acceptance 8, in a real terminal)."""
    cwd, agent_dir = setup(tmp_path)
    with ScriptedModelServer([code_reply("slow", 200, delay_ms=30), {"text": "ok", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir)
        try:
            app.wait_for("fake-model")
            app.type("start")
            app.keys("Enter")
            app.wait_for("slow 001")
            app.type("steer this")
            app.keys("Enter")
            app.wait_for("Steering: steer this")
            app.keys("Escape")
            screen = app.wait_for("Operation aborted")
            assert "slow 200" not in screen
            # The queued steering message came back into the editor.
            assert "steer this" in editor_text(screen)
        finally:
            app.close()
