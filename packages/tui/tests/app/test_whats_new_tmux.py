"""tmux end to end: the real `apex-code` shows "what's new" after an update and records the version (tui.md §13).

That the next start at the same version shows nothing is checked headless (`test_whats_new.py`)."""

import json
from pathlib import Path

from tmux_helpers import TmuxApp, write_models

import apex_coding_agent
import apex_tui
from apex_ai.testing.scripted_server import ScriptedModelServer

CHANGELOGS = [Path(module.__file__).parent / "CHANGELOG.md" for module in (apex_coding_agent, apex_tui)]


def test_an_update_shows_whats_new_and_records_the_version(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    agent_dir = tmp_path / "agent"
    version = apex_coding_agent.__version__
    with ScriptedModelServer([{"text": "unused", "repeat": True}]) as server:
        write_models(agent_dir, server)
        settings = agent_dir / "settings.json"
        settings.write_text(json.dumps({"lastChangelogVersion": "0.0.1"}))
        # Tall enough for both changelogs whole: the header must be on screen, not above it.
        lines = sum(len(p.read_text().splitlines()) for p in CHANGELOGS)
        app = TmuxApp(cwd, agent_dir, height=max(60, 2 * lines + 20))
        try:
            screen = app.wait_for("[What's New]")
            # The installed changelogs' entries (both packages) under the header.
            assert screen.index(f"apex-code v{version}") < screen.index("[What's New]")
            assert screen.count(f"{version} (unreleased)") == 2
            assert json.loads(settings.read_text()) == {"lastChangelogVersion": version}
            app.keys("C-c", "C-c")
            app.wait_for("EXITED 0")
        finally:
            app.close()
