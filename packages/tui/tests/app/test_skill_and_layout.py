"""tui.md acceptance 2 (layout through urwid's ScriptedScreen and a real MainLoop) and the `/skill:<name>` and
`/<template>` rows of acceptance 11 (what the model receives, what the transcript shows)."""

import asyncio
from pathlib import Path

from app_helpers import SIZE, AppHarness
from urwid.testing import ScriptedScreen

from apex_ai.providers.faux import faux_assistant_message
from apex_tui.widgets import UserMessageBlock


def screen_rows(screen: ScriptedScreen) -> list[str]:
    """The last frame the main loop drew, one string per row."""
    text = screen.last_text
    return text.split("\n") if isinstance(text, str) else [str(row) for row in text]


async def test_layout_through_a_scripted_screen_keeps_the_dock_at_the_bottom(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    for index in range(40):
        app.feed.add(UserMessageBlock(app.ctx, f"message {index}"))
    screen = ScriptedScreen(size=SIZE, inputs=[list("typed")])
    main_loop = app.make_main_loop(screen, asyncio.get_running_loop())
    # The asyncio loop already runs (this test): start the main loop on it and let it read the scripted input.
    main_loop.start()
    try:
        for _ in range(200):  # until the (throttled) redraw after the typing
            await asyncio.sleep(0.005)
            rows = screen_rows(screen)
            if rows and rows[-4].startswith("typed"):
                break
    finally:
        main_loop.stop()
    assert len(rows) == 30
    assert "faux-1" in rows[-1] and "work" in rows[-2]  # footer: the last 2 rows
    assert rows[-3] == "─" * 100 and rows[-5] == "─" * 100  # editor rules directly above it
    assert rows[-4].startswith("typed")
    assert "message 39" in "\n".join(rows[:-5])


async def test_skill_and_prompt_template_commands_expand_for_the_model(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    (harness.agent_dir / "prompts").mkdir()
    (harness.agent_dir / "prompts" / "review.md").write_text("---\ndescription: Review it\n---\nReview $@ carefully")
    skill = harness.agent_dir / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Run the linters\n---\nRun ruff on every file.")
    seen: list[str] = []

    def reply(context: object, *_args: object) -> object:
        seen.append(str(context))
        return faux_assistant_message("on it")

    harness.script(reply, reply)
    app = await harness.start()
    harness.type("/review main.py")
    harness.press("enter")
    await harness.settle()
    assert "Review main.py carefully" in seen[-1]
    assert "Review main.py carefully" in harness.text()
    harness.type("/skill:lint src")
    harness.press("enter")
    await harness.settle()
    assert "Run ruff on every file." in seen[-1] and "src" in seen[-1]
    # The transcript shows the skill as a labelled block and the arguments as the user's text, not the raw tag.
    rows = [row.strip() for row in harness.screen() if row.strip()]
    start = rows.index("[skill: lint]")
    assert rows[start : start + 4] == ["[skill: lint]", "Run ruff on every file.", "src", "on it"]
    assert "<skill" not in harness.text() and app.editor.text == ""


def test_only_the_skill_tag_is_split() -> None:
    from apex_tui.app._feed import split_skill_invocation

    block = '<skill name="lint" location="/s/lint/SKILL.md">\nReferences are relative to /s/lint.\n\nRun.\n</skill>'
    assert split_skill_invocation(block) == ("lint", "Run.", "")
    assert split_skill_invocation(block + "\n\nsrc now") == ("lint", "Run.", "src now")
    assert split_skill_invocation("hello <skill name") is None
    assert split_skill_invocation("x" + block) is None
