"""Core slash commands (tui.md §8, C rows): reachable from autocomplete, each with its visible result."""

import json
from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message
from apex_tui.app._commands import command_names
from apex_tui.widgets.pickers import ModelPicker

CORE = [
    "model",
    "scoped-models",
    "settings",
    "new",
    "resume",
    "tree",
    "fork",
    "compact",
    "name",
    "session",
    "copy",
    "export",
    "reload",
    "login",
    "logout",
    "hotkeys",
    "quit",
]


async def test_every_core_command_is_offered_by_autocomplete(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    assert set(CORE) <= set(command_names())
    for name in CORE:
        app.editor.set_text("")
        harness.type("/" + name)
        assert f"/{name}" in [s.label for s in app.editor.suggestions]


async def test_mo_enter_opens_the_model_picker_and_selecting_switches(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("/mo")
    harness.press("enter")
    assert isinstance(app.slot.original_widget, ModelPicker)
    assert "Select model" in harness.text()
    harness.type("think")
    harness.press("enter")
    assert app.slot.original_widget is app.editor
    assert app.session.model is not None and app.session.model.id == "faux-think"
    assert "Model: faux-think" in harness.text()


async def test_model_with_exact_argument_switches_and_escape_closes_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("/model faux/faux-think")
    harness.press("enter")
    assert "Model: faux-think" in harness.text()
    harness.press("ctrl l")
    assert isinstance(app.slot.original_widget, ModelPicker)
    harness.press("esc")
    assert app.slot.original_widget is app.editor


async def test_thinking_name_and_session(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(model="faux-think")
    harness.type("/thinking high")
    harness.press("enter")
    assert "Thinking level: high" in harness.text()
    assert app.session.thinking_level == "high"
    harness.type("/name")
    harness.press("enter")
    assert "Usage: /name <name>" in harness.text()
    harness.type("/name my work")
    harness.press("enter")
    assert "Session name set: my work" in harness.text()
    assert "my work" in harness.screen()[-2]
    harness.type("/session")
    harness.press("enter")
    assert "Name: my work" in harness.text()
    assert f"ID: {app.session.session_id}" in harness.text()


async def test_new_session_clears_the_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("first reply"))
    app = await harness.start()
    old_id = app.session.session_id
    harness.type("hi")
    harness.press("enter")
    await harness.settle()
    assert "first reply" in harness.text()
    harness.type("/new")
    harness.press("enter")
    await harness.settle()
    assert "✓ New session started" in harness.text()
    assert "first reply" not in harness.text()
    assert app.session.session_id != old_id


async def test_copy_export_and_hotkeys(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("copy me"))
    await harness.start()
    harness.type("/copy")
    harness.press("enter")
    assert "No agent message to copy" in harness.text()
    harness.type("hi")
    harness.press("enter")
    await harness.settle()
    harness.type("/copy")
    harness.press("enter")
    assert "Copied last agent message to clipboard" in harness.text()
    harness.type("/export out.jsonl")
    harness.press("enter")
    exported = harness.cwd / "out.jsonl"
    # The notice wraps at the screen width, and where it wraps depends on how long the temp path is (longer under
    # xdist): compare without any white space, which the wrapping and the padding of the rows add.
    assert "".join(f"Session exported to: {exported}".split()) in "".join(harness.text().split())
    assert "copy me" in exported.read_text()
    harness.type("/hotkeys")
    harness.press("enter")
    assert "Ctrl+O" in harness.text()


async def test_compact_with_nothing_to_compact_reports_it(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    await harness.start()
    harness.type("/compact")
    harness.press("enter")
    await harness.settle()
    assert "Error:" in harness.text()


async def test_reload_applies_a_remapped_key(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    (harness.agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "alt+o"}))
    harness.press("meta o")
    assert "Conversation detail" not in harness.text()
    harness.type("/reload")
    harness.press("enter")
    await harness.until("Reloaded keybindings, extensions, skills, prompts, themes, and context files")
    harness.press("meta o")
    assert "Conversation detail: all" in harness.text()
    harness.press("ctrl o")
    assert app.transcript.ctx.detail.value == "all"


async def test_quit_and_unknown_commands(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    seen: list[str] = []

    def reply(context: object, *_args: object) -> object:
        seen.append(str(context))
        return faux_assistant_message("ok")

    harness.script(reply)
    app = await harness.start()
    harness.type("/frobnicate now")
    harness.press("enter")
    await harness.settle()
    assert "/frobnicate now" in seen[0]
    harness.type("/quit")
    harness.press("enter")
    assert app.exiting
