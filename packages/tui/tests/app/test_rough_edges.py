"""Rough edges of the terminal app, one test each: the footer's provider, the setup notice's markdown, the layout
setting applied at once."""

from __future__ import annotations

from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call


def footer_rows(harness: AppHarness) -> list[str]:
    return harness.screen()[-2:]


async def test_the_footer_names_the_provider_when_two_providers_serve_models(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start()
    assert "(faux) faux-1" not in "\n".join(footer_rows(harness))  # one provider: the model id is enough
    harness.model_runtime.registry.register_provider(
        "other", api="faux", base_url="http://localhost:0", models=harness.faux.models
    )
    harness.running.update_footer()
    assert "(faux) faux-1" in footer_rows(harness)[1]


async def test_the_no_model_notice_shows_its_example_as_code_without_fence_marks(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start(model=None)
    screen = harness.text()
    assert "No model available." in screen and "**" not in screen
    assert '{"providers": {"local":' in screen
    assert "```" not in screen


async def test_the_edit_preview_under_the_permission_dialog_numbers_lines_as_the_file_does(tmp_path: Path) -> None:
    """The pending `edit` block shows the diff the tool will report (file line numbers), not lines counted from
    the replaced text; the numbers stay the same once the edit ran."""
    harness = AppHarness(tmp_path)
    (harness.cwd / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    edit = {"path": "notes.txt", "edits": [{"oldText": "line 20\n", "newText": "line twenty\n"}]}
    harness.script(faux_assistant_message([faux_tool_call("edit", edit)], "toolUse"), faux_assistant_message("edited"))
    await harness.start(permission_mode="default")
    harness.type("edit it")
    harness.press("enter")
    await harness.until("Allow edit?")
    pending = [row.strip() for row in harness.screen()]
    assert "-20 line 20" in pending and "+20 line twenty" in pending
    harness.press("enter")
    await harness.until("edited")
    done = [row.strip() for row in harness.screen()]
    assert "-20 line 20" in done and "+20 line twenty" in done


def test_a_terminal_answering_neither_keyboard_protocol_gets_the_notice_once_its_answers_came() -> None:
    import os

    from apex_tui.app._screen import TERMINAL_KEYS_NOTICE, AppScreen, terminal_keys_notice

    master, slave = os.openpty()
    try:
        with os.fdopen(os.dup(slave), "w") as out, os.fdopen(os.dup(slave)) as into:
            screen = AppScreen(input=into, output=out)
            plain = {"TERM": "xterm-256color"}
            assert terminal_keys_notice(screen, plain) is None  # not answered yet
            screen.modes.kitty_keyboard = False
            screen.modes.modify_other_keys = False
            assert terminal_keys_notice(screen, plain) == TERMINAL_KEYS_NOTICE
            assert terminal_keys_notice(screen, {**plain, "TMUX": "/tmp/tmux-0/default,1,0"}) is None
            screen.modes.modify_other_keys = True
            assert terminal_keys_notice(screen, plain) is None
    finally:
        os.close(master)
        os.close(slave)
