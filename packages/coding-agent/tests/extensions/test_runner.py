"""ExtensionRunner result semantics per event kind, and error reporting that never stops a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from apex_ai.types import AssistantMessage, TextContent, UserMessage
from apex_coding_agent.events import AgentEndEvent
from apex_coding_agent.extensions import (
    ExtensionRunner,
    ExtensionRuntime,
    InlineExtension,
    InputRejectedError,
    UiBinding,
    load_extensions,
)
from apex_coding_agent.extensions.api import ExtensionAPI
from apex_coding_agent.extensions.events import (
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolResultPatch,
    UserBashEvent,
)
from apex_coding_agent.extensions.loader import ExtensionSource
from apex_coding_agent.extensions.runner import trust_warning
from apex_coding_agent.modes.rpc.rpc_ui import RpcUi
from apex_coding_agent.resources.diagnostics import SourceInfo


async def runner_with(*factories: Callable[[ExtensionAPI], None]) -> ExtensionRunner:
    runtime, result = await load_extensions(inline=[InlineExtension(f, f"ext{i}") for i, f in enumerate(factories)])
    assert result.errors == []
    return ExtensionRunner(runtime)


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


async def test_project_trust_first_decision_wins_and_project_extensions_are_not_asked(tmp_path: Any) -> None:
    calls: list[str] = []

    def undecided(pi: ExtensionAPI) -> None:
        pi.on("project_trust", lambda e, ctx: calls.append("undecided") or {"trusted": "undecided"})

    def failing(pi: ExtensionAPI) -> None:
        def boom(event: Any, ctx: Any) -> None:
            calls.append("failing")
            raise RuntimeError("trust bug")

        pi.on("project_trust", boom)

    def yes(pi: ExtensionAPI) -> None:
        async def answer(event: Any, ctx: Any) -> dict[str, Any]:
            calls.append(f"yes:{event.cwd}:{ctx.mode}:{ctx.has_ui}")
            return {"trusted": "yes", "remember": True}

        pi.on("project_trust", answer)

    def never(pi: ExtensionAPI) -> None:
        pi.on("project_trust", lambda e, ctx: calls.append("never") or {"trusted": "no"})

    runner = await runner_with(undecided, failing, yes, never)
    result = await runner.emit_project_trust("/work/p")
    assert result is not None and (result.trusted, result.remember) == ("yes", True)
    assert calls == ["undecided", "failing", "yes:/work/p:print:False"]
    assert [(e.extension_path, e.event, e.error) for e in runner.errors] == [("ext1", "project_trust", "trust bug")]
    assert trust_warning(runner.errors[0]) == 'Extension "ext1" project_trust error: trust bug'

    # A project-scoped extension (loaded after trust) is never asked.
    project_file = tmp_path / "proj.py"
    project_file.write_text("def extension(pi):\n    pi.on('project_trust', lambda e, c: {'trusted': 'yes'})\n")
    runtime, _ = await load_extensions([ExtensionSource(project_file, SourceInfo(project_file, "local", "project"))])
    assert await ExtensionRunner(runtime).emit_project_trust("/x") is None


async def test_input_transforms_chain_and_handled_wins() -> None:
    def add_a(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"action": "transform", "text": e.text + " +a"})

    def add_b(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"action": "transform", "text": e.text + " +b"})

    runner = await runner_with(add_a, add_b)
    result = await runner.emit_input("hi", source="rpc")
    assert (result.action, result.text) == ("transform", "hi +a +b")

    late: list[str] = []

    def handle(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"action": "handled"} if e.text.startswith("!") else None)

    def after(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: late.append(e.text))

    runner = await runner_with(handle, after)
    assert (await runner.emit_input("!skip")).action == "handled"
    assert late == []
    assert (await runner.emit_input("plain")).action == "continue"
    assert late == ["plain"]


async def test_input_rejected_fails_the_input_and_is_no_extension_error() -> None:
    late: list[str] = []

    def refuse(pi: ExtensionAPI) -> None:
        def check(event: Any, ctx: Any) -> None:
            if event.type == "agent_end":
                raise InputRejectedError("not an input handler")
            if event.text.startswith("/bad"):
                raise InputRejectedError("cannot do /bad")

        pi.on("input", check)
        pi.on("agent_end", check)

    def after(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: late.append(e.text))

    runner = await runner_with(refuse, after)
    with pytest.raises(InputRejectedError, match="cannot do /bad"):
        await runner.emit_input("/bad x")
    assert late == [] and runner.errors == []  # later handlers never saw it; nothing to report
    assert (await runner.emit_input("fine")).action == "continue" and late == ["fine"]
    # Raised from any other event it is an ordinary handler failure: reported, and the event goes on.
    await runner.emit(AgentEndEvent(messages=[]))
    assert [(e.event, e.error) for e in runner.errors] == [("agent_end", "not an input handler")]


async def test_tool_call_block_and_raising_handler_blocks() -> None:
    def mutate(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            event.input["path"] = "rewritten.txt"

        pi.on("tool_call", handler)

    def block_rm(pi: ExtensionAPI) -> None:
        pi.on("tool_call", lambda e, ctx: {"block": True, "reason": "no"} if e.tool_name == "rm" else None)

    runner = await runner_with(mutate, block_rm)
    event = ToolCallEvent(tool_name="read", tool_call_id="1", input={"path": "a.txt"})
    assert await runner.emit_tool_call(event) is None
    assert event.input == {"path": "rewritten.txt"}
    blocked = await runner.emit_tool_call(ToolCallEvent(tool_name="rm", tool_call_id="2"))
    assert blocked is not None and (blocked.block, blocked.reason) == (True, "no")

    def crash(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            raise KeyError("missing")

        pi.on("tool_call", handler)

    runner = await runner_with(crash)
    blocked = await runner.emit_tool_call(ToolCallEvent(tool_name="read", tool_call_id="3"))
    assert blocked is not None and blocked.block
    assert blocked.reason == "Extension failed, blocking execution: 'missing'"
    assert [e.event for e in runner.errors] == ["tool_call"]


async def test_tool_result_patches_chain() -> None:
    seen: list[str] = []

    def redact(pi: ExtensionAPI) -> None:
        pi.on("tool_result", lambda e, ctx: {"content": [{"type": "text", "text": "[redacted]"}]})

    def flag(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> ToolResultPatch:
            seen.append(event.content[0].text)
            return ToolResultPatch(is_error=True)

        pi.on("tool_result", handler)

    runner = await runner_with(redact, flag)
    event = ToolResultEvent(
        tool_name="bash", tool_call_id="1", content=[TextContent(text="secret")], details={"exitCode": 0}
    )
    patch = await runner.emit_tool_result(event)
    assert seen == ["[redacted]"]
    assert patch is not None
    assert patch.to_wire() == {"content": [{"type": "text", "text": "[redacted]"}], "isError": True}
    assert event.content[0].text == "secret"  # the caller's event is not modified
    assert await (await runner_with()).emit_tool_result(event) is None


async def test_context_replacement_does_not_touch_the_original() -> None:
    def drop_first(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, ctx: {"messages": e.messages[1:]})

    def count(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            event.messages.append(user(f"count={len(event.messages)}"))

        pi.on("context", handler)

    runner = await runner_with(drop_first, count)
    original = [user("one"), user("two")]
    result = await runner.emit_context(original)
    assert [m.content for m in result] == ["two", "count=1"]
    assert [m.content for m in original] == ["one", "two"]


async def test_provider_payload_replacement_and_headers() -> None:
    def add_field(pi: ExtensionAPI) -> None:
        pi.on("before_provider_request", lambda e, ctx: {**e.payload, "temperature": 0})

    def leave(pi: ExtensionAPI) -> None:
        pi.on("before_provider_request", lambda e, ctx: None)

    def headers(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            event.headers["x-trace"] = "1"
            event.headers["x-remove"] = None

        pi.on("before_provider_headers", handler)

    runner = await runner_with(add_field, leave, headers)
    assert await runner.emit_before_provider_request({"model": "m"}) == {"model": "m", "temperature": 0}
    assert await runner.emit_before_provider_headers({"x-remove": "a", "keep": "b"}) == {"keep": "b", "x-trace": "1"}


async def test_message_end_replacement_keeps_role() -> None:
    replacement = AssistantMessage(
        content=[TextContent(text="edited")], api="faux", provider="faux", model="m", stop_reason="stop", timestamp=2
    )

    def wrong_role(pi: ExtensionAPI) -> None:
        pi.on("message_end", lambda e, ctx: {"message": user("not assistant")})

    def edit(pi: ExtensionAPI) -> None:
        pi.on("message_end", lambda e, ctx: {"message": replacement})

    runner = await runner_with(wrong_role, edit)
    original = AssistantMessage(
        content=[TextContent(text="orig")], api="faux", provider="faux", model="m", stop_reason="stop", timestamp=1
    )
    assert await runner.emit_message_end(original) is replacement
    assert [(e.event, e.error) for e in runner.errors] == [
        ("message_end", "message_end replacement must keep role 'assistant', got 'user'")
    ]


async def test_before_agent_start_messages_and_chained_system_prompt() -> None:
    prompts: list[str] = []

    def first(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> dict[str, Any]:
            prompts.append(event.system_prompt)
            return {"systemPrompt": event.system_prompt + "\nA", "message": {"customType": "note", "content": "n1"}}

        pi.on("before_agent_start", handler)

    def second(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> dict[str, Any]:
            prompts.append(event.system_prompt)
            return {"system_prompt": event.system_prompt + "\nB"}

        pi.on("before_agent_start", handler)

    runner = await runner_with(first, second)
    outcome = await runner.emit_before_agent_start("do it", "BASE")
    assert prompts == ["BASE", "BASE\nA"]
    assert outcome.system_prompt == "BASE\nA\nB"
    assert [m.to_wire() for m in outcome.messages] == [{"customType": "note", "content": "n1", "display": True}]
    assert (await (await runner_with()).emit_before_agent_start("x", "BASE")).system_prompt is None


async def test_session_before_cancel_wins_and_user_bash_first_result() -> None:
    def fork_guard(pi: ExtensionAPI) -> None:
        pi.on("session_before_fork", lambda e, ctx: {"cancel": False, "skipConversationRestore": True})
        pi.on("session_before_switch", lambda e, ctx: {"cancel": True})
        pi.on("user_bash", lambda e, ctx: {"result": {"output": "intercepted", "exitCode": 0}})

    def second(pi: ExtensionAPI) -> None:
        pi.on("session_before_switch", lambda e, ctx: {"cancel": False})
        pi.on("user_bash", lambda e, ctx: {"result": {"output": "second"}})

    runner = await runner_with(fork_guard, second)
    fork = await runner.emit_session_before(SessionBeforeForkEvent(entry_id="e1"))
    assert (fork.cancel, fork.skip_conversation_restore) == (False, True)
    switch = await runner.emit_session_before(SessionBeforeSwitchEvent(reason="new"))
    assert switch.cancel is True
    bash = await runner.emit_user_bash(UserBashEvent(command="ls", cwd="/"))
    assert bash is not None and bash.result == {"output": "intercepted", "exitCode": 0}


async def test_resources_discover_collects_paths_per_extension() -> None:
    def one(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda e, ctx: {"skillPaths": [f"{e.cwd}/skills"], "promptPaths": ["/p"]})

    def two(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda e, ctx: {"themePaths": ["/t"]} if e.reason == "reload" else None)

    runner = await runner_with(one, two)
    found = await runner.emit_resources_discover("/c", "reload")
    assert found.skill_paths == [("/c/skills", "ext0")]
    assert found.prompt_paths == [("/p", "ext0")]
    assert found.theme_paths == [("/t", "ext1")]


async def test_raising_handler_reports_extension_error_and_run_continues() -> None:
    reached: list[int] = []

    def broken(pi: ExtensionAPI) -> None:
        async def handler(event: Any, ctx: Any) -> None:
            raise ValueError("handler exploded")

        pi.on("agent_end", handler)
        pi.on("input", lambda e, ctx: {"action": "bogus"})  # malformed result: reported, ignored

    def healthy(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda e, ctx: reached.append(len(e.messages)))

    runner = await runner_with(broken, healthy)
    records: list[dict[str, Any]] = []
    runner.on_error(lambda record: records.append(record.to_wire()))
    await runner.emit(AgentEndEvent(messages=[user("a")]))
    assert reached == [1]
    assert records == [
        {"type": "extension_error", "extensionPath": "ext0", "event": "agent_end", "error": "handler exploded"}
    ]
    assert runner.errors[0].stack is not None and "handler exploded" in runner.errors[0].stack
    assert (await runner.emit_input("x")).action == "continue"
    assert records[-1]["event"] == "input"


async def test_command_error_is_reported_not_raised() -> None:
    def ext(pi: ExtensionAPI) -> None:
        async def fail(args: str, ctx: Any) -> None:
            raise RuntimeError(f"bad {args}")

        pi.register_command("fail", fail)

    runner = await runner_with(ext)
    assert await runner.execute_command("fail", "args") is True
    assert await runner.execute_command("missing") is False
    assert [(e.event, e.error) for e in runner.errors] == [("command:fail", "bad args")]


def test_runtime_default_reporter_is_replaced_by_runner() -> None:
    runtime = ExtensionRuntime()
    runner = ExtensionRunner(runtime)
    runtime.report("p", "e", RuntimeError("x"))
    assert [(r.extension_path, r.event) for r in runner.errors] == [("p", "e")]


async def test_rpc_ui_serves_as_ctx_ui_in_rpc_mode() -> None:
    written: list[dict[str, Any]] = []
    rpc_ui: UiBinding = RpcUi(written.append, new_id=lambda: "req-1")

    def ext(pi: ExtensionAPI) -> None:
        async def handler(event: Any, ctx: Any) -> None:
            assert (ctx.mode, ctx.has_ui) == ("rpc", True)
            ctx.ui.notify(f"ended with {len(event.messages)}", "info")

        pi.on("agent_end", handler)

    runner = await runner_with(ext)
    runner.set_ui(rpc_ui, "rpc")
    await runner.emit(AgentEndEvent(messages=[]))
    assert runner.errors == []
    assert written == [
        {
            "type": "extension_ui_request",
            "id": "req-1",
            "method": "notify",
            "message": "ended with 0",
            "notifyType": "info",
        }
    ]
