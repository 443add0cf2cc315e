"""Trust selector (settings-and-trust.md §6), detail cycle over a real tool run (tui.md §4), fullscreen routing."""

from pathlib import Path

from app_helpers import AppHarness
from urwid.testing import ScriptedScreen

from apex_ai.providers.faux import faux_assistant_message, faux_thinking, faux_tool_call
from apex_coding_agent.cli.args import parse_args
from apex_tui.app._run import ask_trust, trust_choices
from apex_tui.app._startup import resolve_trust
from apex_tui.keybindings import KeybindingManager


def test_trust_selector_offers_five_options_and_returns_the_choice(tmp_path: Path) -> None:
    labels = [c.label for c in trust_choices(tmp_path)]
    assert labels == [
        "Trust",
        f"Trust parent folder ({tmp_path.parent})",
        "Trust (this session only)",
        "Do not trust",
        "Do not trust (this session only)",
    ]
    screen = ScriptedScreen(size=(100, 30), inputs=[["down", "enter"]])
    assert ask_trust(screen, KeybindingManager(), tmp_path) == "trust_parent"
    assert "Trust project folder?" in "\n".join(screen.last_text)


def test_trust_prompt_is_asked_for_a_configured_project_and_saved(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".apex-code").mkdir(parents=True)
    (project / ".apex-code" / "settings.json").write_text("{}")
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    asked: list[Path] = []

    def prompt(root: Path) -> str:
        asked.append(root)
        screen = ScriptedScreen(size=(100, 30), inputs=[["enter"]])
        answer = ask_trust(screen, KeybindingManager(), root)
        assert answer is not None
        return answer

    trusted, _ = resolve_trust(parse_args([]), str(project), agent_dir, prompt)  # type: ignore[arg-type]
    assert trusted and asked == [project.resolve()]
    assert str(project.resolve()) in (agent_dir / "trust.json").read_text()
    again, _ = resolve_trust(parse_args([]), str(project), agent_dir, None)
    assert again


async def test_detail_levels_over_thinking_and_a_30_line_bash_result(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(
        faux_assistant_message(
            [faux_thinking("pondering deeply"), faux_tool_call("bash", {"command": "seq 101 130"})], "toolUse"
        ),
        faux_assistant_message("All done."),
    )
    app = await harness.start()
    harness.type("count")
    harness.press("enter")
    await harness.settle()
    await harness.until("All done.")
    screen = harness.text()
    assert "pondering deeply" in screen
    assert "130" in screen and "earlier lines" in screen and "\n 101" not in screen
    harness.press("ctrl o")
    assert app.ctx.detail.value == "all"
    assert "Conversation detail: all" in harness.text()
    assert "earlier lines" not in harness.text()
    harness.press("ctrl o")
    screen = harness.text()
    assert "pondering deeply" not in screen
    assert "Thinking..." in screen


async def test_fullscreen_page_up_scrolls_the_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    app.root.fullscreen = True
    for index in range(60):
        app.feed.notice("info", f"line {index}")
    before = harness.screen()[0]
    harness.press("page up")
    assert not app.transcript.following
    assert harness.screen()[0] != before
    harness.press("end")
    assert app.transcript.following
    assert harness.screen()[0] == before
