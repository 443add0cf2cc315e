"""The screen invariant in tmux: after every modal flow, in both layouts, the screen equals a full repaint of the
same state (`TmuxApp.assert_repaint_stable`): dialogs leave nothing behind, the spinner stops, the editor and the
footer come back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tmux_helpers import TmuxApp, write_models

from apex_ai.scripted_server import ScriptedModelServer

LAYOUTS = ["inline", "fullscreen"]


def layout_args(layout: str) -> tuple[str, ...]:
    return ("--tui-mode", "fullscreen") if layout == "fullscreen" else ()


def idle(app: TmuxApp) -> str:
    """Wait until the run ended (no `Working...`) and the footer shows."""
    return app.wait_until(lambda s: "Working" not in s and "fake-model" in s, "the app idle")


@pytest.fixture
def workdirs(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    cwd = tmp_path / "work"
    cwd.mkdir()
    yield cwd, tmp_path / "agent"


TOOL_TURN = {"tool_calls": [{"name": "bash", "arguments": {"command": "echo approved-$((6*7))"}}]}
ANSWER_KEYS = {
    "allow once": ["Enter"],
    "always": ["Down", "Enter"],
    "deny": ["Down", "Down", "Enter"],
    "escape": ["Escape"],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("answer", list(ANSWER_KEYS))
def test_permission_dialog_leaves_a_clean_screen(workdirs: tuple[Path, Path], layout: str, answer: str) -> None:
    cwd, agent_dir = workdirs
    with ScriptedModelServer([TOOL_TURN, {"text": "All done here.", "repeat": True}]) as server:
        write_models(agent_dir, server)
        app = TmuxApp(cwd, agent_dir, args=layout_args(layout))
        try:
            app.wait_for("fake-model")
            app.type("run the command")
            app.keys("Enter")
            app.wait_for("Allow bash?")
            app.assert_repaint_stable("the permission dialog open")
            app.keys(*ANSWER_KEYS[answer])
            app.wait_for("All done here.")
            screen = idle(app)
            assert "Allow bash?" not in screen
            screen = app.assert_repaint_stable(f"after answering {answer}")
            assert "─" * 40 in screen and str(cwd.name) in screen
        finally:
            app.close()
