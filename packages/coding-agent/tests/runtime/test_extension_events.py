"""The session runtime delivering extension events and applying their results (resources.md §5)."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_helpers import Harness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage, Context, TextContent, ToolResultMessage, UserMessage
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension, ToolDefinition
from apex_coding_agent.messages import CustomMessage
from apex_coding_agent.runtime import AgentSession, AgentSessionRuntime, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.entries import MessageEntry


def _texts(context: Context) -> list[str]:
    out: list[str] = []
    for message in context.messages:
        content = getattr(message, "content", "")
        if isinstance(content, str):
            out.append(content)
        else:
            out.append("".join(b.text for b in content if isinstance(b, TextContent)))
    return out


class Seen:
    """What the faux model was sent, per request."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []
        self.headers: list[dict[str, Any]] = []

    def reply(self, text: str) -> Any:  # Any: a FauxStep function
        def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
            self.contexts.append(context)
            self.headers.append(dict(options.headers or {}))
            return faux_assistant_message(text)

        return step


async def _session(harness: Harness, *factories: Any, **kwargs: Any) -> AgentSession:
    extensions = [InlineExtension(f, f"ext{i}") for i, f in enumerate(factories)]
    return await harness.session(extensions=extensions, **kwargs)


async def test_input_transform_chains_and_handled_skips_the_model(harness: Harness) -> None:
    seen = Seen()

    def first(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: {"action": "transform", "text": e.text + " one"})

    def second(pi: ExtensionAPI) -> None:
        def handler(e: Any, ctx: Any) -> dict[str, Any]:
            if e.text.startswith("skip"):
                return {"action": "handled"}
            return {"action": "transform", "text": e.text + " two"}

        pi.on("input", handler)

    session = await _session(harness, first, second)
    harness.script(seen.reply("ok"))
    await session.prompt("hi", source="rpc")
    assert _texts(seen.contexts[0])[-1] == "hi one two"
    accepted: list[bool] = []
    assert await session.prompt("skip me", preflight_result=accepted.append) is None
    assert accepted == [True]
    assert len(seen.contexts) == 1


async def test_before_agent_start_adds_a_message_and_replaces_the_prompt_for_one_run(harness: Harness) -> None:
    seen = Seen()
    prompts: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def handler(e: Any, ctx: Any) -> dict[str, Any] | None:
            prompts.append(e.system_prompt)
            if e.prompt == "plain":
                return None
            return {
                "message": {"customType": "note", "content": "remember this", "display": False},
                "systemPrompt": e.system_prompt + "\nEXTRA",
            }

    session = await _session(harness, ext)
    base = session.agent.state.system_prompt
    runs: list[str] = []
    original = session.agent.stream_fn
    assert original is not None

    async def capture(model: Any, context: Context, options: Any) -> Any:
        runs.append(context.system_prompt)
        return await original(model, context, options)  # type: ignore[misc]  # the session's async stream fn

    session.agent.stream_fn = capture
    harness.script(seen.reply("a"), seen.reply("b"))
    await session.prompt("first")
    await session.prompt("plain")
    assert runs == [base + "\nEXTRA", base]
    assert prompts == [base, base]
    assert session.agent.state.system_prompt == base
    custom = [m for m in session.messages if isinstance(m, CustomMessage)]
    assert [(m.custom_type, m.content, m.display) for m in custom] == [("note", "remember this", False)]
    assert _texts(seen.contexts[0])[-1] == "remember this"


async def test_context_handlers_replace_what_is_sent_but_not_the_transcript(harness: Harness) -> None:
    seen = Seen()

    def ext(pi: ExtensionAPI) -> None:
        @pi.on("context")
        def handler(e: Any, ctx: Any) -> dict[str, Any]:
            return {"messages": [*e.messages, UserMessage(content="injected", timestamp=0)]}

    session = await _session(harness, ext)
    harness.script(seen.reply("ok"))
    await session.prompt("hello")
    assert _texts(seen.contexts[0])[-2:] == ["hello", "injected"]
    assert [m.role for m in session.messages] == ["user", "assistant"]


async def test_message_end_replacement_keeps_the_role_and_is_stored(harness: Harness) -> None:
    def ext(pi: ExtensionAPI) -> None:
        @pi.on("message_end")
        def handler(e: Any, ctx: Any) -> dict[str, Any] | None:
            if isinstance(e.message, AssistantMessage):
                return {"message": e.message.model_copy(update={"content": [TextContent(text="rewritten")]})}
            if isinstance(e.message, UserMessage):
                return {"message": faux_assistant_message("wrong role")}
            return None

    session = await _session(harness, ext)
    harness.script(faux_assistant_message("original"))
    await session.prompt("hi")
    assert session.get_last_assistant_text() == "rewritten"
    assert isinstance(session.messages[0], UserMessage)
    stored = [e.message for e in session.session_manager.get_entries() if getattr(e, "type", "") == "message"]
    assert isinstance(stored[-1], AssistantMessage) and stored[-1].content[0].text == "rewritten"  # type: ignore[union-attr]
    assert any(err.event == "message_end" for err in session.extension_runner.errors)  # type: ignore[union-attr]


def _echo_tool() -> ToolDefinition:
    async def execute(call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> str:
        return f"echo {params['text']}"

    return ToolDefinition(
        name="echo",
        description="Echo text",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=execute,
    )


async def test_tool_call_block_and_input_edit_then_tool_result_patch(harness: Harness) -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.register_tool(_echo_tool())

        @pi.on("tool_call")
        def guard(e: Any, ctx: Any) -> dict[str, Any] | None:
            if e.input.get("text") == "secret":
                return {"block": True, "reason": "no secrets"}
            e.input["text"] = e.input["text"].upper()
            return None

        @pi.on("tool_result")
        def patch(e: Any, ctx: Any) -> dict[str, Any]:
            return {"details": {"patched": True}, "content": [{"type": "text", "text": e.content[0].text + "!"}]}

    session = await _session(harness, ext)
    assert "echo" in [t.name for t in session.agent.state.tools]
    harness.script(
        faux_assistant_message(
            [faux_tool_call("echo", {"text": "hi"}, id="a"), faux_tool_call("echo", {"text": "secret"}, id="b")]
        ),
        faux_assistant_message("done"),
    )
    await session.prompt("go")
    results = {m.tool_call_id: m for m in session.messages if isinstance(m, ToolResultMessage)}
    assert results["a"].content[0].text == "echo HI!"  # type: ignore[union-attr]
    assert results["a"].details == {"patched": True}
    assert results["b"].is_error and "no secrets" in results["b"].content[0].text  # type: ignore[union-attr]


async def test_extension_commands_run_in_prompt_are_listed_first_and_refused_when_queued(harness: Harness) -> None:
    calls: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        @pi.register_command("deploy", description="Deploy it")
        async def deploy(args: str, ctx: Any) -> None:
            calls.append(args)

    session = await _session(harness, ext)
    accepted: list[bool] = []
    assert await session.prompt("/deploy now please", preflight_result=accepted.append) is None
    assert calls == ["now please"] and accepted == [True]
    assert session.messages == []
    commands = session.get_commands()
    assert commands[0]["name"] == "deploy" and commands[0]["source"] == "extension"
    with pytest.raises(RuntimeError, match="cannot be queued"):
        await session.steer("/deploy later")
    with pytest.raises(RuntimeError, match="cannot be queued"):
        await session.follow_up("/deploy later")


async def test_model_and_thinking_selection_events(harness: Harness) -> None:
    seen: list[tuple[str, Any, Any]] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("model_select", lambda e, ctx: seen.append(("model", e.model.id, e.source)))
        pi.on("thinking_level_select", lambda e, ctx: seen.append(("thinking", e.level, e.previous_level)))

    session = await _session(harness, ext, model=harness.model("faux-1"))
    session.set_model(harness.model("faux-think"))
    session.set_thinking_level("high")
    await session.wait_for_idle()
    assert ("model", "faux-think", "set") in seen
    assert ("thinking", "high", "off") in seen  # faux-1 has no reasoning: it ran at "off"


async def test_user_bash_result_from_an_extension_replaces_the_command(harness: Harness) -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, ctx: {"result": {"output": f"fake {e.command}", "exitCode": 0}})

    session = await _session(harness, ext)
    result = await session.execute_bash("rm -rf /")
    assert result.output == "fake rm -rf /" and result.exit_code == 0
    assert session.messages[-1].output == "fake rm -rf /"  # type: ignore[union-attr]


async def test_user_bash_operations_from_an_extension_run_the_command(harness: Harness) -> None:
    calls: list[tuple[str, str]] = []

    class Recorder:
        """Runs the command on this machine after noting it, as a logging or SSH backend would."""

        async def exec(self, command: str, cwd: str, **options: Any) -> dict[str, int]:
            calls.append((command, cwd))
            options["on_data"](b"remote says hi\n")
            return {"exitCode": 7}

    def ext(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda e, ctx: {"operations": Recorder()})

    session = await _session(harness, ext)
    result = await session.execute_bash("deploy")
    assert calls == [("deploy", session.cwd)]
    assert (result.output, result.exit_code) == ("remote says hi\n", 7)
    assert session.messages[-1].output == "remote says hi\n"  # type: ignore[union-attr]


async def test_compaction_cancel_and_supplied_summary(harness: Harness) -> None:
    decisions: list[dict[str, Any]] = [{"cancel": True}]
    compacted: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        @pi.on("session_before_compact")
        def before(e: Any, ctx: Any) -> dict[str, Any]:
            return decisions[0] if decisions[0].get("cancel") else {"compaction": {"summary": "by extension"}}

        pi.on("session_compact", lambda e, ctx: compacted.append((e.from_extension, e.compaction_entry.summary)))

    session = await _session(harness, ext, settings={"compaction": {"keepRecentTokens": 50}})
    harness.script(*(faux_assistant_message(f"reply {i}") for i in range(4)))
    for i in range(4):
        await session.prompt(f"question {i} " + "x" * 400)
    with pytest.raises(RuntimeError, match="cancelled"):
        await session.compact()
    decisions[0] = {}
    result = await session.compact()
    assert result.summary == "by extension" and result.from_hook
    assert compacted == [(True, "by extension")]


async def test_tree_navigation_can_be_cancelled(harness: Harness) -> None:
    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_tree", lambda e, ctx: {"cancel": e.preparation["userWantsSummary"] is False})

    session = await _session(harness, ext)
    harness.script(faux_assistant_message("a"))
    await session.prompt("first")
    leaf = session.session_manager.get_leaf_id()
    target = next(e.id for e in session.session_manager.get_entries() if getattr(e, "type", "") == "message")
    result = await session.navigate_tree(target)
    assert result.cancelled and session.session_manager.get_leaf_id() == leaf


async def test_runtime_switch_and_fork_cancel_and_session_lifecycle(harness: Harness) -> None:
    events: list[str] = []
    cancel = {"switch": True, "fork": True}

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_start", lambda e, ctx: events.append(f"start:{e.reason}"))
        pi.on("session_shutdown", lambda e, ctx: events.append(f"shutdown:{e.reason}"))
        pi.on("session_before_switch", lambda e, ctx: {"cancel": cancel["switch"]})
        pi.on("session_before_fork", lambda e, ctx: {"cancel": cancel["fork"]})

    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        model_runtime=harness.model_runtime,
        extensions=[InlineExtension(ext, "lifecycle")],
    )
    runtime = AgentSessionRuntime(result)
    await runtime.start_extensions()
    first = runtime.session
    harness.script(faux_assistant_message("a"))
    await first.prompt("hello")
    assert await runtime.new_session() is first and runtime.last_change_cancelled
    user_entry = next(
        e.id for e in first.session_manager.get_entries() if isinstance(e, MessageEntry) and e.message.role == "user"
    )
    assert (await runtime.fork(user_entry)).cancelled
    cancel["switch"] = False
    replaced = await runtime.new_session()
    assert replaced is not first and not runtime.last_change_cancelled
    await runtime.dispose()
    assert events == ["start:startup", "shutdown:new", "start:new", "shutdown:quit"]


async def test_tools_registered_after_startup_join_the_active_set(harness: Harness) -> None:
    holder: dict[str, ExtensionAPI] = {}

    def ext(pi: ExtensionAPI) -> None:
        holder["pi"] = pi

    session = await _session(harness, ext)
    assert "echo" not in [t.name for t in session.agent.state.tools]
    holder["pi"].register_tool(_echo_tool())
    assert "echo" in [t.name for t in session.agent.state.tools]
    assert "echo" in [t["name"] for t in holder["pi"].get_all_tools()]
    holder["pi"].set_active_tools(["read", "echo"])
    assert [t.name for t in session.agent.state.tools] == ["read", "echo"]
    assert "- echo" not in session.agent.state.system_prompt  # no prompt snippet: left out of the tool list


async def test_provider_header_handlers_edit_the_request_headers(harness: Harness) -> None:
    seen = Seen()

    def ext(pi: ExtensionAPI) -> None:
        @pi.on("before_provider_headers")
        def headers(e: Any, ctx: Any) -> None:
            e.headers["x-trace"] = "t1"

    session = await _session(harness, ext)
    harness.script(seen.reply("ok"))
    await session.prompt("hi")
    assert seen.headers[0]["x-trace"] == "t1"


async def test_run_events_reach_handlers_in_order_with_turn_indexes(harness: Harness) -> None:
    seen: list[str] = []
    kinds = ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end", "agent_settled"]

    def ext(pi: ExtensionAPI) -> None:
        for kind in kinds:
            pi.on(kind, lambda e, ctx: seen.append(f"{e.type}:{getattr(e, 'turn_index', '')}"))

    session = await _session(harness, ext)
    harness.script(
        faux_assistant_message([faux_tool_call("read", {"path": "missing.txt"})]), faux_assistant_message("ok")
    )
    await session.prompt("go")
    assert seen[0] == "agent_start:" and seen[-2:] == ["agent_end:", "agent_settled:"]
    assert [s for s in seen if s.startswith("turn_")] == ["turn_start:0", "turn_end:0", "turn_start:1", "turn_end:1"]
