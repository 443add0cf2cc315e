"""The app over a real session with the faux provider: layout, submit/stream, queues, abort, keys (tui.md §1, §6, §7)."""

import asyncio
from pathlib import Path

from app_helpers import AppHarness

from apex_ai.providers.faux import faux_assistant_message
from apex_coding_agent.events import SessionWriteErrorEvent
from apex_tui.widgets import UserMessageBlock


async def test_layout_keeps_the_dock_at_the_bottom_with_a_long_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    for index in range(40):
        app.feed.add(UserMessageBlock(app.ctx, f"message {index}"))
    rows = harness.screen()
    assert len(rows) == 30
    assert rows[-2].startswith("work") or "work" in rows[-2]
    assert "faux-1" in rows[-1]
    assert rows[-3] == "─" * 100 and rows[-5] == "─" * 100
    assert "message 39" in "\n".join(rows[:-5])


async def test_submit_streams_the_reply_into_the_transcript(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    harness.script(faux_assistant_message("Hi there, **friend**."))
    app = await harness.start()
    harness.type("hello")
    harness.press("enter")
    assert app.editor.text == ""
    await harness.settle()
    screen = harness.text()
    assert "hello" in screen
    assert "Hi there, friend." in screen
    assert app.editor.history.entries == ["hello"]


async def test_steering_and_follow_up_are_queued_then_restored(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    gate = asyncio.Event()

    async def slow(*_args: object) -> object:
        await gate.wait()
        return faux_assistant_message("done")

    harness.script(slow, faux_assistant_message("after"), faux_assistant_message("after 2"))
    app = await harness.start()
    harness.type("start")
    harness.press("enter")
    await asyncio.sleep(0.01)
    assert app.session.is_streaming
    harness.type("x")
    harness.press("enter")
    harness.type("y")
    harness.press("meta enter")
    await asyncio.sleep(0.01)
    screen = harness.text()
    assert "Steering: x" in screen and "Follow-up: y" in screen
    harness.press("meta up")
    assert app.editor.text == "x\n\ny"
    assert "Restored 2 queued messages to editor" in harness.text()
    assert "Steering: x" not in harness.text()
    gate.set()
    await harness.settle()


async def test_escape_aborts_the_stream_and_returns_queued_text(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    gate = asyncio.Event()

    async def slow(*_args: object) -> object:
        await gate.wait()
        return faux_assistant_message("late reply " * 50)

    harness.script(slow)
    app = await harness.start()
    harness.type("go")
    harness.press("enter")
    await asyncio.sleep(0.01)
    harness.type("queued")
    harness.press("enter")
    await asyncio.sleep(0.01)
    harness.press("esc")
    assert app.editor.text == "queued"
    gate.set()
    await harness.settle()
    assert "Operation aborted" in harness.text()


async def test_ctrl_c_clears_and_a_second_press_within_500ms_exits(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("draft")
    harness.press("ctrl c")
    assert app.editor.text == ""
    harness.clock.now += 0.6
    harness.press("ctrl c")
    assert not app.exiting
    harness.clock.now += 0.2
    harness.press("ctrl c")
    assert app.exiting and app.exit_code == 0


async def test_ctrl_d_exits_only_on_an_empty_editor(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.type("ab")
    harness.press("home", "ctrl d")
    assert app.editor.text == "b" and not app.exiting
    harness.press("ctrl d", "ctrl d")
    assert app.exiting


async def test_detail_cycle_and_thinking_toggle(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.press("ctrl o")
    assert "Conversation detail: all" in harness.text()
    harness.press("ctrl o")
    assert "Conversation detail: overview" in harness.text()
    assert "Conversation detail: all" not in harness.text()  # a status replaces the previous status
    harness.press("ctrl t")
    assert "Thinking blocks: hidden" in harness.text()
    assert app.session.settings_manager.get("hideThinkingBlock") is True


async def test_thinking_cycle_and_model_cycle_report_status(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    harness.press("shift tab")
    assert "Current model does not support thinking" in harness.text()
    harness.press("ctrl p")
    assert "Switched to faux-think" in harness.text()
    assert app.session.model is not None and app.session.model.id == "faux-think"
    harness.press("shift tab")
    assert "Thinking level:" in harness.text()


async def test_bang_command_runs_bash_and_reaches_the_next_request(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    seen: list[str] = []

    def reply(context: object, *_args: object) -> object:
        seen.append(str(context))
        return faux_assistant_message("ok")

    harness.script(reply)
    app = await harness.start()
    harness.type("!echo hi")
    harness.press("enter")
    await harness.settle()
    await harness.until("exit 0")
    assert "$ echo hi" in harness.text()
    harness.type("!!echo secret")
    harness.press("enter")
    await harness.settle()
    await harness.until("secret")
    harness.type("next")
    harness.press("enter")
    await harness.settle()
    assert "echo hi" in seen[0] and "hi" in seen[0]
    assert "secret" not in seen[0]
    assert app.editor.text == ""


async def test_no_model_shows_setup_help_and_does_not_crash_on_submit(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start(model=None)
    assert "No model available" in harness.text()
    assert "models.json" in harness.text()
    harness.type("hello")
    harness.press("enter")
    assert "No model selected" in harness.text()
    assert app.editor.text == "hello"


async def test_a_failed_session_write_is_shown_as_an_error(tmp_path: Path) -> None:
    harness = AppHarness(tmp_path)
    app = await harness.start()
    message = "Could not write session file /tmp/s.jsonl: File too large"
    app._on_event(SessionWriteErrorEvent(error=message))
    assert message in harness.text()
