"""The session's record of what the model is told (docs/sessions.md, "System messages"): a new session leads with a
system message declaring the prompt and tools, a change appends one delta at the next turn boundary, and replaying
a branch's system messages always gives the prompt and tools of the request that follows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from runtime_helpers import Harness

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.transcript import current_system_message, render_system_prompt
from apex_ai.types import AssistantMessage, Context, SystemMessage, ToolCall, ToolResultMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension, ToolDefinition
from apex_coding_agent.runtime import AgentSession, create_agent_session
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.listing import build_session_info

PI_SESSION = Path(__file__).parents[1] / "cli" / "data" / "pi" / "print_text" / "session.jsonl"


def _tool(name: str, *, snippet: str | None = None, on_call: Any = None) -> ToolDefinition:
    """An extension tool; without `snippet` it stays out of the prompt's tool list (a tools-only change)."""

    async def execute(call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> str:
        if on_call is not None:
            on_call()
        return f"{name} done"

    return ToolDefinition(
        name=name,
        description=f"The {name} tool",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        prompt_snippet=snippet,
    )


def _systems(manager: SessionManager, branch: bool = True) -> list[SystemMessage]:
    entries = manager.get_branch() if branch else manager.get_entries()
    return [e.message for e in entries if isinstance(e, MessageEntry) and isinstance(e.message, SystemMessage)]


def _roles(manager: SessionManager) -> list[str]:
    return [e.message.role for e in manager.get_branch() if isinstance(e, MessageEntry)]


def _dump(tools: Any) -> list[dict[str, Any]]:
    return [tool.model_dump(by_alias=True) for tool in tools or []]


class Checked:
    """Faux replies that check, as each request is made, that replaying the branch's system messages gives exactly
    the prompt and tools the request carries."""

    def __init__(self) -> None:
        self.session: AgentSession | None = None
        self.contexts: list[Context] = []

    def reply(self, message: AssistantMessage) -> Any:  # Any: a FauxStep function
        def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
            assert self.session is not None
            recorded = current_system_message(_systems(self.session.session_manager))
            assert recorded is not None
            assert render_system_prompt(recorded) == context.system_prompt
            assert _dump(recorded.tools_added) == _dump(context.tools)
            self.contexts.append(context)
            return message

        return step


def _no_system_between_calls_and_results(manager: SessionManager) -> None:
    """A tool call's results follow its assistant message directly: no system message lands in between."""
    messages = [e.message for e in manager.get_branch() if isinstance(e, MessageEntry)]
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            calls = [b for b in message.content if isinstance(b, ToolCall)]
            following = messages[index + 1 : index + 1 + len(calls)]
            assert all(isinstance(m, ToolResultMessage) for m in following), [m.role for m in following]


async def _with_extension(harness: Harness, **kwargs: Any) -> tuple[AgentSession, ExtensionAPI]:
    holder: dict[str, ExtensionAPI] = {}

    def ext(pi: ExtensionAPI) -> None:
        holder["pi"] = pi

    session = await harness.session(extensions=[InlineExtension(ext, "tools")], **kwargs)
    return session, holder["pi"]


async def test_the_record_matches_every_request_of_a_run_with_tool_and_prompt_changes(harness: Harness) -> None:
    check = Checked()
    session, pi = await _with_extension(harness, manager=harness.persisted_manager())
    check.session = session
    # A tool that switches the active tools while it runs: the prompt lists the built-in tools, so the change alters
    # it; the run's later requests keep what they started with and the change is recorded at the next run's first turn.
    pi.register_tool(_tool("switch", on_call=lambda: pi.set_active_tools(["read", "switch"])))
    harness.script(
        check.reply(faux_assistant_message([faux_tool_call("switch", {}, id="s1")], stop_reason="toolUse")),
        check.reply(faux_assistant_message([faux_tool_call("read", {"path": "."}, id="r1")], stop_reason="toolUse")),
        check.reply(faux_assistant_message("first done")),
        check.reply(faux_assistant_message("second done")),
        check.reply(faux_assistant_message("third done")),
        check.reply(faux_assistant_message("fourth done")),
    )

    await session.prompt("first")  # three requests, the active tools switched during the first tool call
    assert len(_systems(session.session_manager)) == 1
    await session.prompt("second")  # the switch (the prompt lists the tools): one `replace` delta
    pi.register_tool(_tool("echo"))  # no prompt snippet: the prompt text stays, only the tools change
    await session.prompt("third")
    (harness.cwd / "AGENTS.md").write_text("Answer briefly.", encoding="utf-8")
    await session.reload_resources()
    await session.prompt("fourth")

    systems = _systems(session.session_manager)
    assert len(check.contexts) == 6 and len(systems) == 4
    leading, switched, echo, agents = systems
    assert leading.replace is None and leading.content
    assert [t.name for t in leading.tools_added or []] == ["read", "bash", "edit", "write", "switch"]
    assert switched.replace is True and [t.name for t in switched.tools_added or []] == ["read", "switch"]
    assert echo.replace is None and echo.content == "" and echo.tools_removed is None
    assert [t.name for t in echo.tools_added or []] == ["echo"]
    assert agents.replace is True and "Answer briefly." in content_of(agents)
    assert _roles(session.session_manager) == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        *["system", "user", "assistant"] * 3,
    ]
    _no_system_between_calls_and_results(session.session_manager)
    # The agent's messages (what `get_messages` returns) never hold the record.
    assert not any(isinstance(m, SystemMessage) for m in session.messages)


async def test_a_tool_that_leaves_the_prompt_as_it_is_joins_the_run_at_its_next_turn(harness: Harness) -> None:
    check = Checked()
    session, pi = await _with_extension(harness, manager=harness.persisted_manager())
    check.session = session
    # `grow` registers `echo` and drops `old` while it runs (tools without a prompt snippet, as an MCP server's);
    # `late` has one, so adding it changes the prompt and waits for the next run.
    grow = _tool("grow", on_call=lambda: (pi.register_tool(_tool("echo")), pi.set_active_tools(active())))
    late = _tool("late", snippet="A tool that changes the prompt.")

    def active() -> list[str]:
        return [name for name in pi.get_active_tools() if name != "old"]

    pi.register_tool(_tool("old"))
    pi.register_tool(grow)
    harness.script(
        check.reply(faux_assistant_message([faux_tool_call("grow", {}, id="g1")], stop_reason="toolUse")),
        check.reply(faux_assistant_message([faux_tool_call("echo", {}, id="e1")], stop_reason="toolUse")),
        check.reply(faux_assistant_message("grown")),
        check.reply(faux_assistant_message([faux_tool_call("add_late", {}, id="l1")], stop_reason="toolUse")),
        check.reply(faux_assistant_message("not yet")),
        check.reply(faux_assistant_message("now")),
    )
    await session.prompt("grow")
    first = [[t.name for t in c.tools or []] for c in check.contexts]
    assert first[0] == ["read", "bash", "edit", "write", "old", "grow"]
    assert first[1] == first[2] == ["read", "bash", "edit", "write", "grow", "echo"]
    assert _roles(session.session_manager) == [
        *["system", "user", "assistant", "toolResult"],
        *["system", "assistant", "toolResult", "assistant"],  # the delta opens the turn after `grow`
    ]
    delta = _systems(session.session_manager)[-1]
    assert [t.name for t in delta.tools_added or []] == ["echo"] and delta.replace is None
    assert [r.name for r in delta.tools_removed or []] == ["old"]

    pi.register_tool(_tool("add_late", on_call=lambda: pi.register_tool(late)))
    session.set_active_tools(["read", "add_late"])
    await session.prompt("again")  # `late` changes the prompt: the run keeps its tools
    assert [t.name for t in check.contexts[4].tools or []] == ["read", "add_late"]
    await session.prompt("next")
    assert "late" in [t.name for t in check.contexts[5].tools or []]
    assert _systems(session.session_manager)[-1].replace is True
    _no_system_between_calls_and_results(session.session_manager)


def content_of(message: SystemMessage) -> str:
    return message.content if isinstance(message.content, str) else "".join(b.text for b in message.content)


async def test_a_change_while_idle_is_one_delta_at_the_next_turn_boundary(harness: Harness) -> None:
    check = Checked()
    session, pi = await _with_extension(harness)
    check.session = session
    harness.script(*(check.reply(faux_assistant_message(text)) for text in ("a1", "a2", "a3")))
    await session.prompt("one")
    entries = len(session.session_manager.get_entries())

    pi.register_tool(_tool("echo"))
    session.set_active_tools(["read", "echo"])
    session.set_active_tools(["read", "bash", "echo"])
    assert len(session.session_manager.get_entries()) == entries  # nothing is written between turns
    await session.prompt("two")
    await session.prompt("three")  # nothing changed since: no delta

    assert _roles(session.session_manager) == ["system", "user", "assistant", "system", "user", "assistant"] + [
        "user",
        "assistant",
    ]
    delta = _systems(session.session_manager)[1]
    assert delta.replace is True  # the prompt lists the active tools, so its text changed
    assert [t.name for t in delta.tools_added or []] == ["read", "bash", "echo"]


async def test_resume_with_a_changed_agents_md_appends_one_replace_delta(harness: Harness) -> None:
    check = Checked()
    first = await harness.session(manager=harness.persisted_manager())
    check.session = first
    harness.script(*(check.reply(faux_assistant_message(text)) for text in ("a1", "a2", "a3")))
    await first.prompt("one")
    file = first.session_file
    assert file is not None
    first.session_manager.close()  # one writer per session file

    unchanged = await harness.session(manager=SessionManager.open(file))
    check.session = unchanged
    await unchanged.prompt("two")
    assert len(_systems(unchanged.session_manager)) == 1  # the same prompt and tools: nothing appended
    unchanged.session_manager.close()

    (harness.cwd / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    changed = await harness.session(manager=SessionManager.open(file))
    check.session = changed
    await changed.prompt("three")
    systems = _systems(changed.session_manager)
    assert len(systems) == 2 and systems[1].replace is True and "Use tabs." in content_of(systems[1])
    assert _roles(changed.session_manager)[-3:] == ["system", "user", "assistant"]
    reread = [json.loads(line) for line in Path(file).read_text().splitlines()]
    assert [r["message"]["role"] for r in reread if r["type"] == "message"].count("system") == 2


async def test_a_pi_session_without_system_messages_stays_without_them(harness: Harness, tmp_path: Path) -> None:
    copy = tmp_path / "pi.jsonl"
    shutil.copy(PI_SESSION, copy)
    before = copy.read_text()
    harness.script(faux_assistant_message("still here"), faux_assistant_message("from the top"))
    session = await harness.session(manager=SessionManager.open(copy), model=harness.model())
    assert [m.role for m in session.messages] == ["user", "assistant"]

    await session.prompt("and again")
    first_user = next(e for e in session.session_manager.get_entries() if isinstance(e, MessageEntry))
    await session.navigate_tree(first_user.id)  # above the first user message: a branch with no conversation yet
    await session.prompt("from the start")

    after = copy.read_text()
    assert after.startswith(before)  # appended to, never rewritten
    added = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert [r["message"]["role"] for r in added if r["type"] == "message"] == ["user", "assistant"] * 2
    assert '"role":"system"' not in after


async def test_navigating_to_a_branch_recorded_with_other_tools_records_a_delta_there(harness: Harness) -> None:
    check = Checked()
    session = await harness.session()
    check.session = session
    harness.script(*(check.reply(faux_assistant_message(text)) for text in ("a1", "a2", "a3", "a4")))
    await session.prompt("one")
    session.set_active_tools(["read"])
    await session.prompt("two")  # this branch records the switch to `read` alone
    a1 = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)][2]
    assert isinstance(a1.message, AssistantMessage)

    await session.navigate_tree(a1.id)  # back above the switch: this branch still declares the four tools
    await session.prompt("three")

    systems = _systems(session.session_manager)
    assert len(systems) == 2 and [t.name for t in systems[1].tools_added or []] == ["read"]
    assert _roles(session.session_manager) == ["system", "user", "assistant", "system", "user", "assistant"]
    assert len(_systems(session.session_manager, branch=False)) == 3  # one delta on each branch

    # Back to the very start (above the first user message): the leading declaration is kept, and as the live
    # tools (`read` alone) differ from it, one delta follows it.
    first_user = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)][1]
    await session.navigate_tree(first_user.id)
    await session.prompt("four")
    assert _roles(session.session_manager) == ["system", "system", "user", "assistant"]


async def test_compaction_keeps_the_record_and_never_summarizes_it(harness: Harness) -> None:
    check = Checked()
    session = await harness.session(settings={"compaction": {"keepRecentTokens": 1}})
    check.session = session
    summaries: list[Context] = []

    def summary(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        summaries.append(context)
        return faux_assistant_message("## Goal\nSay hi.")

    harness.script(
        check.reply(faux_assistant_message("a1")),
        check.reply(faux_assistant_message("a2")),
        summary,  # the history before the cut...
        summary,  # ...and the opening of the turn it splits (the cut lands on the last reply)
        check.reply(faux_assistant_message("a3")),
    )
    await session.prompt("one")
    await session.prompt("two")
    prompt = session.base_system_prompt

    await session.compact()
    await session.prompt("three")  # the record still matches the request (checked): no delta

    assert len(summaries) == 2
    for context in summaries:
        sent = json.dumps([m.model_dump(by_alias=True) for m in context.messages])
        assert prompt[:60] not in sent  # the conversation was summarized, not the prompt
    assert len(_systems(session.session_manager)) == 1


def _scripted_registry(server: ScriptedModelServer) -> tuple[ModelRuntime, ModelRegistry]:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider(
        "scripted",
        api="openai-completions",
        base_url=server.openai_base_url,
        models=[{"id": "local-model", "contextWindow": 100000, "maxTokens": 1024}],
    )
    auth = AuthStorage.in_memory()
    auth.set_runtime_key("scripted", "sk-local")
    return ModelRuntime(None, auth, registry=registry), registry


async def test_a_new_session_file_leads_with_what_the_first_request_was_sent(tmp_path: Path) -> None:
    """Real SDK against the scripted server; after a tool is added the next request keeps its prefix."""
    holder: dict[str, ExtensionAPI] = {}

    def ext(pi: ExtensionAPI) -> None:
        holder["pi"] = pi

    cwd = tmp_path / "project"
    cwd.mkdir()
    answer = {"text": "Done.", "usage": {"input": 9, "output": 2}, "repeat": True}
    with ScriptedModelServer([answer]) as server:
        model_runtime, registry = _scripted_registry(server)
        result = await create_agent_session(
            cwd=str(cwd),
            agent_dir=str(tmp_path / "agent"),
            session_manager=SessionManager.create(str(cwd), tmp_path / "sessions"),
            model_runtime=model_runtime,
            settings_manager=SettingsManager.in_memory({}),
            permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
            model=registry.require_model("scripted", "local-model"),
            extensions=[InlineExtension(ext, "tools")],
        )
        session = result.session
        await session.prompt("one")
        holder["pi"].register_tool(_tool("echo"))
        await session.prompt("two")
        first, second = (request["body"] for request in server.requests)
        await session.close_connections()

    lines = [json.loads(line) for line in Path(session.session_file or "").read_text().splitlines()]
    messages = [line["message"] for line in lines if line["type"] == "message"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "system", "user", "assistant"]
    leading, delta = messages[0], messages[3]
    assert first["messages"][0] == {"role": "system", "content": leading["content"]}
    declared = [
        {"type": "function", "function": {"name": t["name"], "description": t["description"], **params(t)}}
        for t in leading["toolsAdded"]
    ]
    assert [{**t, "function": {k: v for k, v in t["function"].items() if k != "strict"}} for t in first["tools"]] == (
        declared
    )
    assert delta == {"role": "system", "content": "", "toolsAdded": [delta["toolsAdded"][0]], "timestamp": ANY_INT}
    assert delta["toolsAdded"][0]["name"] == "echo"

    # Stable prefix: the earlier messages go out as the same bytes, and the new tool is appended to the list.
    def wire(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    kept = len(first["messages"]) + 1  # the first request's messages and the assistant's reply
    assert wire(second["messages"][: len(first["messages"])]) == wire(first["messages"])
    assert [m["role"] for m in second["messages"][kept - 1 :]] == ["assistant", "user"]
    assert wire(second["tools"][:-1]) == wire(first["tools"])
    assert second["tools"][-1]["function"]["name"] == "echo"


def params(tool: dict[str, Any]) -> dict[str, Any]:
    return {"parameters": tool["parameters"]} if "parameters" in tool else {}


class _AnyInt:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)

    def __hash__(self) -> int:
        return 0


ANY_INT: Any = _AnyInt()


async def test_a_leading_system_message_alone_is_nothing_to_compact(harness: Harness) -> None:
    """A window so small that every reply crosses the threshold: with one exchange there is nothing before it to
    summarize (the system message before the first user message goes with the kept part, like settings entries)."""
    check = Checked()
    session = await harness.session(
        manager=harness.persisted_manager(), settings={"compaction": {"reserveTokens": 199_990}}
    )
    check.session = session
    summaries: list[Context] = []

    def summary(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        summaries.append(context)
        return faux_assistant_message("## Goal\nNothing.")

    harness.script(check.reply(faux_assistant_message("only reply")), summary)

    await session.prompt("one")

    assert len(check.contexts) == 1 and summaries == []  # no summary request was made
    assert [e.type for e in session.session_manager.get_entries()].count("compaction") == 0
    assert _roles(session.session_manager) == ["system", "user", "assistant"]


async def test_listing_and_html_export_read_sessions_with_system_messages(harness: Harness, tmp_path: Path) -> None:
    session, pi = await _with_extension(harness, manager=harness.persisted_manager())
    harness.script(faux_assistant_message("a1"), faux_assistant_message("a2"))
    await session.prompt("first question")
    pi.register_tool(_tool("echo"))
    await session.prompt("second question")
    file = Path(session.session_file or "")

    info = build_session_info(file)
    assert info is not None
    assert (info.first_message, info.message_count) == ("first question", 4)  # the conversation's messages

    page = Path(session.export_to_html(str(tmp_path / "out.html"))).read_text(encoding="utf-8")
    transcript = page.split('<div class="transcript">', 1)[1]
    assert transcript.count('class="entry system"') == 2
    assert "<summary>system prompt</summary>" in transcript  # the leading prompt, collapsed
    assert transcript.index("system prompt") < transcript.index("first question")
    assert "Tools: +echo" in transcript and transcript.index("Tools: +echo") < transcript.index("second question")


async def test_a_shell_command_before_the_first_prompt_does_not_stop_the_record(harness: Harness) -> None:
    check = Checked()
    session = await harness.session(manager=harness.persisted_manager())
    check.session = session
    harness.script(check.reply(faux_assistant_message("seen")))

    await session.execute_bash("echo before")
    await session.prompt("what did it print?")

    assert _roles(session.session_manager) == ["bashExecution", "system", "user", "assistant"]
    assert len(check.contexts) == 1  # the request was checked against the record
