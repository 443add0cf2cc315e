"""The permission gate on tool calls, and user shell commands (`!cmd`) joining the context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runtime_helpers import Harness, Recorder

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage, Context, Model, TextContent, ToolResultMessage, UserMessage
from apex_coding_agent.messages import BashExecutionMessage
from apex_coding_agent.runtime import to_json_event


def _results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def _text(message: ToolResultMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


async def test_plan_mode_blocks_write_with_the_reason_as_an_error_result(harness: Harness) -> None:
    harness.script(
        faux_assistant_message([faux_tool_call("write", {"path": "x.txt", "content": "no"})], stop_reason="toolUse"),
        faux_assistant_message("understood"),
    )
    session = await harness.session(mode="plan")
    recorder = Recorder()
    session.subscribe(recorder)

    await session.prompt("write x")

    [result] = _results(session.messages)
    assert result.is_error is True
    assert _text(result) == "write is not permitted in plan mode."
    assert not (harness.cwd / "x.txt").exists()
    [end] = recorder.of("tool_execution_end")
    assert end.is_error is True


async def test_default_mode_without_a_responder_blocks_bash_but_allows_read(harness: Harness) -> None:
    (harness.cwd / "readme.txt").write_text("readable\n")
    harness.script(
        faux_assistant_message(
            [
                faux_tool_call("read", {"path": "readme.txt"}),
                faux_tool_call("bash", {"command": "touch ran.txt"}),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message("ok"),
    )
    session = await harness.session(mode="default")

    await session.prompt("look around")

    read_result, bash_result = _results(session.messages)
    assert read_result.is_error is False and "readable" in _text(read_result)
    assert bash_result.is_error is True
    assert _text(bash_result) == "bash requires approval, and no responder is available in this session."
    assert not (harness.cwd / "ran.txt").exists()


async def test_bash_tool_sees_the_session_environment(harness: Harness) -> None:
    command = (
        "echo $APEX_CODE_PROVIDER/$PI_PROVIDER $APEX_CODE_MODEL/$PI_MODEL $APEX_CODE_REASONING_LEVEL $PI_SESSION_FILE"
    )
    harness.script(
        faux_assistant_message([faux_tool_call("bash", {"command": command})], stop_reason="toolUse"),
        faux_assistant_message("ok"),
    )
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager, model=harness.model("faux-think"), thinking_level="low")
    recorder = Recorder()
    session.subscribe(recorder)

    await session.prompt("env")

    assert [e.type for e in recorder.events if e.type.startswith("tool_execution")][0] == "tool_execution_start"
    assert recorder.of("tool_execution_update")  # progress still reaches subscribers
    [result] = _results(session.messages)
    assert _text(result).strip() == f"faux/faux faux-think/faux-think low {session.session_file}"


async def test_execute_bash_output_joins_the_next_prompt(harness: Harness) -> None:
    seen: list[Context] = []

    def reply(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        seen.append(context)
        return faux_assistant_message("saw it")

    harness.script(reply)
    session = await harness.session(manager=harness.persisted_manager())
    recorder = Recorder()
    session.subscribe(recorder)

    result = await session.execute_bash("printf 'a\\nb\\n'", id="b1")
    hidden = await session.execute_bash("echo secret-output", exclude_from_context=True)
    await session.prompt("what did I run?")

    assert (result.output, result.exit_code, result.cancelled, result.truncated) == ("a\nb\n", 0, False, False)
    assert hidden.exit_code == 0
    updates = [to_json_event(e) for e in recorder.of("bash_execution_update")]
    assert "".join(str(u["delta"]) for u in updates if u.get("id") == "b1") == "a\nb\n"
    [context] = seen
    texts = [
        "".join(b.text for b in m.content if isinstance(b, TextContent))
        for m in context.messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
    ]
    assert texts[0] == "Ran `printf 'a\\nb\\n'`\n```\na\nb\n\n```"
    assert texts[-1] == "what did I run?"
    assert not any("secret-output" in t for t in texts)
    kinds = [type(m) for m in session.messages]
    assert kinds == [BashExecutionMessage, BashExecutionMessage, UserMessage, AssistantMessage]
    roles = [
        json.loads(line)["message"]["role"]
        for line in Path(session.session_file or "").read_text().splitlines()
        if json.loads(line)["type"] == "message"
    ]
    # The new session's system message is written at its first turn, after the commands run before it.
    assert roles == ["bashExecution", "bashExecution", "system", "user", "assistant"]


async def test_execute_bash_reports_failure_and_strips_escapes(harness: Harness) -> None:
    session = await harness.session()
    result = await session.execute_bash("printf '\\033[31mred\\033[0m\\r\\n'; exit 3")
    assert result.output == "red\n"
    assert result.exit_code == 3
    [message] = session.messages
    assert isinstance(message, BashExecutionMessage) and message.exit_code == 3
