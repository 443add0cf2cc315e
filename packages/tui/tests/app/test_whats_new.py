"""Start-up "what's new" (tui.md §13; settings `lastChangelogVersion`, `collapseChangelog`) in the real app.

The app runs over a real session runtime and a settings manager writing a real `settings.json`; changelogs are
given as `Changelog` records (what `/changelog`'s lookup returns) except in the test reading the installed ones.
"""

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app_helpers import AppHarness

import apex_coding_agent
from apex_ai.types import UserMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.app._changelog import Changelog
from apex_tui.app._history import INITIAL_MESSAGES
from apex_tui.app._whats_new import check_whats_new, parse_entries, parse_version
from apex_tui.keybindings import load_keybindings

AGENT_LOG = """# Changelog of apex-coding-agent

## 0.3.0 (unreleased)

- Not released yet: hidden.

## 0.2.0 (2026-12-01)

- Agent feature **two**.

## 0.1.0 (2026-11-01)

- Agent feature one.
"""
TUI_LOG = """# Changelog of apex-tui

## [0.2.0]

- Tui feature two.

## 0.1.0

- Tui feature one.
"""
CONDENSED = "Updated to v0.2.0. Use /changelog to view the full changelog."


class Changelogs:
    """The installed changelogs at version 0.2.0; counts how often the app asked for them."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> Sequence[Changelog]:
        self.reads += 1
        return [Changelog("apex-coding-agent", "0.2.0", AGENT_LOG), Changelog("apex-tui", "0.2.0", TUI_LOG)]


def settings_file(harness: AppHarness, data: dict[str, Any] | None) -> Path:
    path = harness.agent_dir / "settings.json"
    if data is not None:
        path.write_text(json.dumps(data))
    return path


async def open_app(
    harness: AppHarness,
    settings: dict[str, Any] | None,
    *,
    version: str = "0.2.0",
    messages: int = 0,
    quiet: bool = False,
    changelogs: Callable[[], Sequence[Changelog]] | None = None,
) -> InteractiveApp:
    """The app over a session holding `messages` user messages, with global settings `settings` on disk; its
    start-up checks for news in `changelogs` (by default the installed changelogs)."""
    manager = SessionManager.create(str(harness.cwd), harness.agent_dir / "sessions")
    for index in range(messages):
        manager.append_message(UserMessage(content=f"question {index}", timestamp=1))
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        model=harness.faux.model("faux-1"),
        session_manager=manager,
        settings_manager=SettingsManager(settings_file(harness, settings), None),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
    )
    harness.app = InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(harness.agent_dir),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        version=version,
        quiet=quiet,
        **({"changelogs": changelogs} if changelogs is not None else {}),
    )
    return harness.app


def tall_screen(app: InteractiveApp, rows: int = 300) -> str:
    return "\n".join(row.decode("utf-8") for row in app.root.render((100, rows), focus=True).text)


def stored(harness: AppHarness) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((harness.agent_dir / "settings.json").read_text())
    return data


async def test_a_newer_version_shows_new_entries_between_resources_and_session_messages(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.cwd / "AGENTS.md").write_text("Be brief.")
    changelogs = Changelogs()
    app = await open_app(harness, {"lastChangelogVersion": "0.1.0", "theme": "dark"}, messages=2, changelogs=changelogs)
    news = app.whats_new
    assert news is not None and news.version == "0.2.0"
    screen = tall_screen(app)
    order = [
        screen.index("v0.2.0"),  # the header
        screen.index("[Context] AGENTS.md"),
        screen.index("[What's New]"),
        screen.index("apex-coding-agent"),
        screen.index("0.2.0 (2026-12-01)"),
        screen.index("Agent feature two."),  # markdown rendered: no `**` left
        screen.index("apex-tui"),
        screen.index("Tui feature two."),
        screen.index("question 0"),
        screen.index("question 1"),
    ]
    assert order == sorted(order)
    for old_or_upcoming in ("Agent feature one.", "Tui feature one.", "Not released yet", "**two**"):
        assert old_or_upcoming not in screen
    # Recorded in the global file, other keys kept.
    assert stored(harness) == {"lastChangelogVersion": "0.2.0", "theme": "dark"}
    assert changelogs.reads == 1


async def test_the_next_start_at_the_same_version_shows_nothing(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    first = await open_app(harness, {"lastChangelogVersion": "0.1.0"}, changelogs=Changelogs())
    assert first.whats_new is not None
    changelogs = Changelogs()
    again = await open_app(harness, None, changelogs=changelogs)  # the settings file as the first start left it
    assert again.whats_new is None
    assert len(again.transcript) == len(first.transcript) - 1  # the same start-up blocks, less the news
    assert "What's New" not in tall_screen(again) and "Updated to" not in tall_screen(again)
    assert changelogs.reads == 0  # the usual start reads no changelog file
    assert stored(harness) == {"lastChangelogVersion": "0.2.0"}


async def test_collapse_changelog_shows_one_line_instead_of_the_entries(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    settings = {"lastChangelogVersion": "0.1.0", "collapseChangelog": True}
    app = await open_app(harness, settings, messages=1, changelogs=Changelogs())
    assert app.whats_new is not None
    screen = tall_screen(app)
    assert CONDENSED in screen
    assert screen.index(CONDENSED) < screen.index("question 0")
    assert "[What's New]" not in screen and "Agent feature two." not in screen
    assert stored(harness)["lastChangelogVersion"] == "0.2.0"


async def test_a_quiet_start_keeps_only_the_condensed_line(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(harness, {"lastChangelogVersion": "0.1.0"}, quiet=True, messages=1, changelogs=Changelogs())
    assert app.whats_new is not None
    screen = tall_screen(app)
    assert "v0.2.0" in screen and "[What's New]" not in screen
    assert screen.index(CONDENSED) < screen.index("question 0")


async def test_a_fresh_install_records_the_version_without_showing_the_changelog(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    changelogs = Changelogs()
    app = await open_app(harness, None, changelogs=changelogs)
    assert app.whats_new is None
    assert "What's New" not in tall_screen(app) and "Updated to" not in tall_screen(app)
    assert changelogs.reads == 0
    assert stored(harness) == {"lastChangelogVersion": "0.2.0"}


async def test_a_downgrade_shows_nothing_and_keeps_the_newer_version(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(harness, {"lastChangelogVersion": "0.3.1"}, changelogs=Changelogs())
    assert app.whats_new is None
    assert stored(harness) == {"lastChangelogVersion": "0.3.1"}


async def test_the_installed_changelogs_are_read_when_the_version_is_new(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    version = apex_coding_agent.__version__
    app = await open_app(harness, {"lastChangelogVersion": "0.0.1"}, version=version)
    news = app.whats_new
    assert news is not None
    assert [p.distribution for p in news.packages] == ["apex-coding-agent", "apex-tui"]
    screen = tall_screen(app, rows=400)
    assert "[What's New]" in screen
    heading = f"{version} (unreleased)"  # the real files' first entries
    assert screen.count(heading) == 2
    assert stored(harness) == {"lastChangelogVersion": version}


async def test_older_history_loads_below_the_whats_new_block(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(
        harness, {"lastChangelogVersion": "0.1.0"}, messages=INITIAL_MESSAGES + 50, changelogs=Changelogs()
    )
    assert app.whats_new is not None
    assert app.history.remaining > 0
    app.load_history()
    texts = [block.search_text() for block in app.transcript.walker]
    news_at = next(i for i, text in enumerate(texts) if text.startswith("[What's New]"))
    first_question = texts.index("question 0")
    assert news_at < first_question
    assert texts[first_question : first_question + 2] == ["question 0", "question 1"]


def test_entries_versions_and_the_decision_without_an_app() -> None:
    assert parse_version("0.2") == (0, 2, 0)
    assert parse_version("v1.2.3.dev4") == (1, 2, 3)
    assert parse_version("0.2.0rc1") == (0, 2, 0)
    assert parse_version("dev") is None
    entries = parse_entries(
        "# Title\n\nintro\n\n## 1.0.0\n\n- a\n\n## Unversioned notes\n\n- b\n\n## [0.9.1] - x\n- c\n"
    )
    assert [(e.version, e.markdown) for e in entries] == [
        ((1, 0, 0), "## 1.0.0\n\n- a"),
        ((0, 9, 1), "## [0.9.1] - x\n- c"),
    ]
    settings = SettingsManager.in_memory({"lastChangelogVersion": "not a version"})
    # A value that is no version counts as a fresh install: recorded, nothing shown.
    assert check_whats_new(settings, "0.2.0", Changelogs()) is None
    assert settings.get("lastChangelogVersion") == "0.2.0"
    # A build without a version compares nothing and records nothing.
    assert check_whats_new(settings, "dev", Changelogs()) is None
    assert settings.get("lastChangelogVersion") == "0.2.0"
