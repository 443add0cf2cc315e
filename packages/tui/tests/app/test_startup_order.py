"""Start-up transcript order (tui.md §13): header → loaded resources → `Model scope: …` → what's new → messages.

The real app over a real session runtime (faux provider); scoped models are what `--models` / `enabledModels`
resolve to (`ScopedModel` records given to `create_agent_session`), changelogs are given as `Changelog` records.
"""

from collections.abc import Sequence
from pathlib import Path

from app_helpers import AppHarness

from apex_ai.types import UserMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, ScopedModel, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_tui.app import InteractiveApp
from apex_tui.app._changelog import Changelog
from apex_tui.keybindings import load_keybindings

CHANGELOG = "# Changelog\n\n## 0.2.0\n\n- Feature two.\n\n## 0.1.0\n\n- Feature one.\n"
SCOPE_LINE = "Model scope: faux-1, faux-think:high (ctrl+p to cycle)"


def changelogs() -> Sequence[Changelog]:
    return [Changelog("apex-coding-agent", "0.2.0", CHANGELOG)]


async def open_app(
    harness: AppHarness,
    *,
    scoped: Sequence[tuple[str, str | None]] = (),
    quiet: bool = False,
    verbose: bool = False,
    messages: int = 2,
) -> InteractiveApp:
    """The app (version 0.2.0, last seen 0.1.0) over a session with `messages` user messages and `scoped` models."""
    (harness.cwd / "AGENTS.md").write_text("Be brief.")
    manager = SessionManager.in_memory(str(harness.cwd))
    for index in range(messages):
        manager.append_message(UserMessage(content=f"question {index}", timestamp=1))
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        model=harness.faux.model("faux-1"),
        # The levels are ModelThinkingLevel literals; the tests spell them as plain strings.
        scoped_models=[ScopedModel(harness.faux.model(model_id), level) for model_id, level in scoped],  # type: ignore[arg-type]
        session_manager=manager,
        settings_manager=SettingsManager.in_memory({"lastChangelogVersion": "0.1.0"}),
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
    )
    harness.app = InteractiveApp(
        AgentSessionRuntime(result),
        keymap_loader=lambda: load_keybindings(harness.agent_dir),
        cwd=str(harness.cwd),
        agent_dir=harness.agent_dir,
        version="0.2.0",
        quiet=quiet,
        verbose=verbose,
        changelogs=changelogs,
    )
    return harness.app


def tall_screen(app: InteractiveApp, rows: int = 200) -> str:
    return "\n".join(row.decode("utf-8") for row in app.root.render((100, rows), focus=True).text)


def block_texts(app: InteractiveApp) -> list[str]:
    return [block.search_text() for block in app.transcript.walker]


async def test_the_scope_line_sits_between_resources_and_whats_new(tmp_path: Path) -> None:
    app = await open_app(AppHarness(tmp_path), scoped=[("faux-1", None), ("faux-think", "high")])
    screen = tall_screen(app)
    order = [
        screen.index("v0.2.0"),  # the header
        screen.index("[Context] AGENTS.md"),
        screen.index(SCOPE_LINE),
        screen.index("[What's New]"),
        screen.index("Feature two."),
        screen.index("question 0"),
        screen.index("question 1"),
    ]
    assert order == sorted(order)
    # Built in that order, not spliced in afterwards: the history starts right after the news block.
    texts = block_texts(app)
    scope_at = texts.index(SCOPE_LINE)
    assert texts[scope_at + 1].startswith("[What's New]")
    assert app.history.head == scope_at + 2
    assert texts[app.history.head] == "question 0"


async def test_no_scoped_models_no_scope_line(tmp_path: Path) -> None:
    app = await open_app(AppHarness(tmp_path))
    screen = tall_screen(app)
    assert "Model scope" not in screen
    assert screen.index("[Context] AGENTS.md") < screen.index("[What's New]") < screen.index("question 0")


async def test_the_scope_line_stays_when_a_status_follows(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await open_app(harness, scoped=[("faux-1", None), ("faux-think", "high")], messages=0)
    harness.press("ctrl p")  # cycles the scope: a `Switched to …` status line
    screen = harness.text()
    assert "Switched to faux-think" in screen
    assert SCOPE_LINE in tall_screen(app)


async def test_a_quiet_start_hides_the_scope_line_unless_verbose(tmp_path: Path) -> None:
    (tmp_path / "quiet").mkdir()
    (tmp_path / "verbose").mkdir()
    quiet = await open_app(AppHarness(tmp_path / "quiet"), scoped=[("faux-1", None)], quiet=True)
    assert "Model scope" not in tall_screen(quiet)
    loud = await open_app(AppHarness(tmp_path / "verbose"), scoped=[("faux-1", None)], quiet=True, verbose=True)
    texts = block_texts(loud)
    assert texts[0] == "Model scope: faux-1 (ctrl+p to cycle)"  # no header in a quiet start
    assert texts[1] == "Updated to v0.2.0. Use /changelog to view the full changelog."
    assert texts[2] == "question 0"
