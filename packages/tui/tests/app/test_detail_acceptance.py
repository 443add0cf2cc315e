"""tui.md acceptance 3 and 4: the three-level detail cycle over one real reply (thinking, text, a 30-line `bash`
result and an `edit` diff), and `hideThinkingBlock`. The level is UI state only: the session file never changes."""

from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_text, faux_thinking, faux_tool_call
from apex_tui.app import InteractiveApp

TALL = (100, 200)


def everything(app: InteractiveApp) -> str:
    """The whole transcript (a frame tall enough for all of it) as text."""
    return "\n".join(row.decode("utf-8") for row in app.root.render(TALL, focus=True).text)


def script_reply(harness: AppHarness) -> None:
    (harness.cwd / "notes.txt").write_text("alpha\nbeta\nomega\n")
    harness.script(
        faux_assistant_message(
            [
                faux_thinking("pondering deeply"),
                faux_text("Running two tools."),
                faux_tool_call("bash", {"command": "seq 101 130"}),
                faux_tool_call("edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
            ],
            "toolUse",
        ),
        faux_assistant_message("All done."),
    )


async def test_details_all_overview_over_thinking_bash_and_edit(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    script_reply(harness)
    app = await harness.start(persisted=True)
    harness.type("go")
    harness.press("enter")
    await harness.settle()
    await harness.until("All done.")
    assert (harness.cwd / "notes.txt").read_text() == "alpha\ngamma\nomega\n"
    session_file = Path(app.session.session_file or "")
    saved = session_file.read_bytes()

    assert app.ctx.detail.value == "details"
    text = everything(app)
    assert "pondering deeply" in text
    rows = [row.strip() for row in text.split("\n")]
    assert ["-2 beta", "+2 gamma"] == rows[rows.index("-2 beta") : rows.index("-2 beta") + 2]  # the diff, full
    assert "130" in text and "earlier lines" in text
    assert "\n 101" not in text and "125" not in text  # only the last 5 of 30 lines

    harness.press("ctrl o")
    assert app.ctx.detail.value == "all"
    text = everything(app)
    assert all(str(n) in text for n in range(101, 131))
    assert "earlier lines" not in text
    assert "pondering deeply" in text and "gamma" in text

    harness.press("ctrl o")
    assert app.ctx.detail.value == "overview"
    text = everything(app)
    assert "pondering deeply" not in text and "Thinking..." in text
    assert "-2 beta" not in text and "+2 gamma" not in text and "+1 -1" in text
    assert session_file.read_bytes() == saved


async def test_hide_thinking_block_hides_it_at_details_only_and_ctrl_t_persists_the_flip(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    script_reply(harness)
    app = await harness.start(settings={"hideThinkingBlock": True})
    harness.type("go")
    harness.press("enter")
    await harness.settle()
    await harness.until("All done.")
    text = everything(app)
    assert "pondering deeply" not in text and "Thinking..." in text
    harness.press("ctrl o")
    assert app.ctx.detail.value == "all"
    assert "pondering deeply" in everything(app)
    harness.press("ctrl o", "ctrl o")
    assert app.ctx.detail.value == "details"
    harness.press("ctrl t")
    assert "Thinking blocks: visible" in harness.text()
    assert app.session.settings_manager.get("hideThinkingBlock") is False
    assert "pondering deeply" in everything(app)
