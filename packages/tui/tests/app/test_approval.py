"""Tool approval in the app (settings-and-trust.md §7): the permission gate asks, a SelectDialog answers."""

from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import FauxStep, faux_assistant_message, faux_tool_call
from apex_ai.types import ToolResultMessage
from apex_tui.app._approval import describe_call, session_choice
from apex_tui.widgets.pickers import SelectDialog


def _bash_turns(*commands: str) -> list[FauxStep]:
    steps: list[FauxStep] = [
        faux_assistant_message([faux_tool_call("bash", {"command": command})], "toolUse") for command in commands
    ]
    return [*steps, faux_assistant_message("finished")]


def _results(harness: AppHarness) -> list[ToolResultMessage]:
    return [m for m in harness.running.session.messages if isinstance(m, ToolResultMessage)]


async def test_allow_once_runs_and_deny_blocks_with_the_declined_reason(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(*_bash_turns("echo approved-$((40+2))", "echo never-run"))
    app = await harness.start(permission_mode="default")
    harness.type("run two commands")
    harness.press("enter")
    await harness.until("Allow bash?")
    dialog = app.slot.original_widget
    assert isinstance(dialog, SelectDialog)
    screen = harness.text()
    assert "echo approved-$((40+2))" in screen
    # `$((...))` has no rule that could describe it: allowing it for the session would allow only this call, the
    # same as `Allow once`, so that choice is not offered.
    assert "Allow once" in screen and "Deny" in screen
    assert "Allow for this session" not in screen and "Always" not in screen
    harness.press("enter")  # Allow once
    await harness.until_true(lambda: app.responder.asked == 2 and isinstance(app.slot.original_widget, SelectDialog))
    assert "echo never-run" in harness.text()
    assert "Allow for this session  bash echo never-run" in harness.text()
    harness.press("down", "down", "enter")  # Deny
    await harness.settle()
    assert app.slot.original_widget is app.editor
    results = _results(harness)
    assert "approved-42" in str(results[0].content)
    assert results[1].is_error and "bash was declined." in str(results[1].content)
    assert app.responder.asked == 2
    assert "finished" in harness.text()


async def test_escape_denies_and_always_allow_is_remembered_for_the_session(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(*_bash_turns("echo one", "echo one", "echo two"))
    app = await harness.start(permission_mode="default")
    harness.type("go")
    harness.press("enter")
    await harness.until("Allow bash?")
    assert "Allow for this session  bash echo one" in harness.text()
    harness.press("down", "enter")  # Allow for this session
    await harness.until_true(lambda: app.responder.asked == 2 and isinstance(app.slot.original_widget, SelectDialog))
    assert "echo two" in harness.text()  # the second `echo one` matched the session rule: no question
    harness.press("esc")
    await harness.settle()
    results = _results(harness)
    assert [r.is_error for r in results] == [False, False, True]
    assert "bash was declined." in str(results[2].content)


async def test_approval_dialog_returns_to_an_open_picker(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(*_bash_turns("echo x"))
    app = await harness.start(permission_mode="default")
    harness.type("go")
    harness.press("enter")
    harness.press("ctrl l")  # the model picker is open when the question comes
    picker = app.slot.original_widget
    await harness.until("Allow bash?")
    harness.press("enter")
    await harness.settle()
    assert app.slot.original_widget is picker


def test_call_descriptions() -> None:
    assert describe_call("bash", {"command": "ls -la"}) == "ls -la"
    assert describe_call("write", {"path": "a.txt", "content": "x"}) == "a.txt"
    assert describe_call("custom", {"b": 1, "a": "z"}) == '{"a": "z", "b": 1}'
    assert describe_call("bash", {"command": "x" * 1000}).endswith("…")
    assert session_choice(None, "bash", "git status") == "bash git status"
    assert session_choice(None, "bash", None) is None
