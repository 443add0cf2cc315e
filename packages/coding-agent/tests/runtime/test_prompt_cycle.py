"""A full prompt -> tools -> answer cycle: persisted, reloaded, and its events compared with the pi capture."""

from __future__ import annotations

import json
from pathlib import Path

from runtime_helpers import Harness, Recorder, without_system

from apex_agent.messages import dump_message
from apex_ai.providers.faux import faux_assistant_message, faux_text, faux_tool_call
from apex_ai.types import AssistantMessage, SystemMessage, ToolResultMessage
from apex_coding_agent.runtime import SessionAgentEndEvent, to_json_event
from apex_coding_agent.session import SessionManager

DATA = Path(__file__).parent / "data"


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _tool_script(harness: Harness) -> None:
    harness.script(
        faux_assistant_message(
            [
                faux_tool_call("write", {"path": "notes.txt", "content": "written by the agent\n"}, id="call_w"),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message(
            [
                faux_tool_call(
                    "bash",
                    {
                        "command": "cat notes.txt; echo id=$APEX_CODE_SESSION_ID pi=$PI_SESSION_ID model=$APEX_CODE_MODEL"
                    },
                    id="call_b",
                )
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message("All done."),
    )


async def test_tool_cycle_is_persisted_and_reloads_into_an_equal_context(harness: Harness) -> None:
    _tool_script(harness)
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager)

    stop = await session.prompt("Write a note and show it")

    assert stop == "completed"
    assert (harness.cwd / "notes.txt").read_text() == "written by the agent\n"
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, False]
    bash_text = results[1].content[0].text  # type: ignore[union-attr]
    assert "written by the agent" in bash_text
    assert f"id={session.session_id} pi={session.session_id} model=faux-1" in bash_text
    assert session.get_last_assistant_text() == "All done."

    file = Path(session.session_file or "")
    records = _lines(file)
    assert [r["type"] for r in records] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
        "message",
        "message",
        "message",
        "message",
        "message",
        "custom",  # the turn's file checkpoint (it wrote notes.txt)
    ]
    roles = [r["message"]["role"] for r in records if r["type"] == "message"]  # type: ignore[index]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert records[-1]["customType"] == "apex-code.checkpoint"
    for parent, child in zip(records[1:], records[2:], strict=False):
        assert child["parentId"] == parent["id"]

    reopened = SessionManager.open(file)
    context = reopened.build_session_context()
    # The session context leads with the system message; the agent's messages never hold it.
    assert isinstance(context.messages[0], SystemMessage)
    rest = [dump_message(m) for m in context.messages[1:]]
    assert rest == [dump_message(m) for m in session.messages]
    assert context.model is not None and context.model.model_id == "faux-1"
    reloaded = await harness.session(manager=reopened)
    assert [dump_message(m) for m in reloaded.messages] == [dump_message(m) for m in session.messages]


async def test_event_order_and_entries_follow_the_pi_capture(harness: Harness) -> None:
    harness.script(faux_assistant_message("Hello! I am a fake model."))
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager)
    recorder = Recorder()
    session.subscribe(recorder)

    await session.prompt("Say hello")

    pi_events = _lines(DATA / "pi_print_text_stdout.jsonl")[1:]  # line 1 is the session header
    pi_types: list[str] = []
    for event in pi_events:
        kind = str(event["type"])
        if kind == "message_update" and pi_types[-1:] == [kind]:
            continue
        pi_types.append(kind)
    ours = recorder.compact()
    ours_plain = [t.split("(")[0] for t in without_system(ours)]
    assert ours_plain == [*pi_types, "agent_settled"]
    assert ours == [
        "agent_start",
        "turn_start",
        "message_start(system)",
        "message_end(system)",
        "message_start(user)",
        "message_end(user)",
        "message_start(assistant)",
        "message_update",
        "message_end(assistant)",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]

    # Every key pi puts on an event is on ours too (we add stopReason/willRetry to agent_end).
    ours_wire = [to_json_event(e) for e in recorder.events]
    for kind in {"turn_end", "message_start", "message_end", "agent_end"}:
        pi_keys = next(set(e) for e in pi_events if e["type"] == kind)
        our_keys = next(set(e) for e in ours_wire if e["type"] == kind)
        assert pi_keys <= our_keys, kind
    end = recorder.of("agent_end")[0]
    assert isinstance(end, SessionAgentEndEvent)
    assert to_json_event(end)["stopReason"] == "completed"
    assert to_json_event(end)["willRetry"] is False
    update = next(w for w in ours_wire if w["type"] == "message_update")
    assert set(update) == {"type", "assistantMessageEvent"}
    assert "partial" not in update["assistantMessageEvent"]  # type: ignore[operator]

    pi_entries = [r["type"] for r in _lines(DATA / "pi_print_text_session.jsonl")]
    our_lines = _lines(Path(session.session_file or ""))
    assert [r["type"] for r in without_system(our_lines)] == pi_entries
    messages = [r["message"] for r in our_lines if r["type"] == "message"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]  # type: ignore[index]


async def test_nothing_is_written_before_the_first_assistant_reply(harness: Harness) -> None:
    harness.script(faux_assistant_message([faux_text("ok")]))
    session = await harness.session(manager=harness.persisted_manager())
    file = Path(session.session_file or "")
    assert not file.exists()
    await session.prompt("hi")
    assert file.exists()
    assistant = session.messages[-1]
    assert isinstance(assistant, AssistantMessage) and assistant.stop_reason == "stop"
