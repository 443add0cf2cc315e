"""`/reload` on the runtime (resources.md §1, §5): extensions re-imported from disk, lifecycle events with reason
`reload`, context files and skills re-read; the session, transcript and model stay."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path
from typing import Any

from runtime_helpers import Harness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage, Context, TextContent, ToolResultMessage
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session
from apex_coding_agent.runtime.extension_startup import load_startup_extensions
from apex_coding_agent.session import SessionManager

TOOL_EXTENSION = """
from apex_coding_agent.extensions import ToolDefinition

LOG = []


def extension(pi):
    async def execute(call_id, params, signal, on_update, ctx):
        return "{reply}"

    pi.register_tool(ToolDefinition(name="greet", description="Greets", execute=execute, prompt_snippet="{snippet}"))
    pi.register_command("{command}", lambda args, ctx: None, description="a command")
    pi.register_shortcut("ctrl+{key}", lambda ctx: None)
    pi.register_flag("{command}-flag", default=True)
    for name in ("session_shutdown", "resources_discover", "session_start"):
        pi.on(name, lambda event, ctx: pi.events.emit("seen", (event.type, event.reason)))
"""


def write_extension(path: Path, *, reply: str, command: str = "hello", key: str = "g", snippet: str = "Greet") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = TOOL_EXTENSION.format(reply=reply, command=command, key=key, snippet=snippet)
    path.write_text(text, encoding="utf-8")


class Seen:
    """What the faux model was sent, per request."""

    def __init__(self) -> None:
        self.contexts: list[Context] = []

    def reply(self, message: AssistantMessage) -> Any:  # Any: a FauxStep function
        def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
            self.contexts.append(context)
            return message

        return step


async def build(harness: Harness, *, inline: tuple[InlineExtension, ...] = ()) -> AgentSessionRuntime:
    settings = SettingsManager.in_memory({})
    startup = await load_startup_extensions(
        cwd=str(harness.cwd), agent_dir=str(harness.agent_dir), settings=settings, inline=inline
    )
    assert startup.errors == []
    result = await create_agent_session(
        cwd=str(harness.cwd),
        agent_dir=str(harness.agent_dir),
        session_manager=SessionManager.in_memory(str(harness.cwd)),
        settings_manager=settings,
        model_runtime=harness.model_runtime,
        permission_gate=PermissionGate(harness.cwd, flag_mode="bypassPermissions"),
        sleep=harness.sleep,
        extension_runner=startup.runner,
    )
    runtime = AgentSessionRuntime(result, sleep=harness.sleep)
    await runtime.start_extensions()
    return runtime


def tool_outputs(runtime: AgentSessionRuntime) -> list[str]:
    return [
        "".join(b.text for b in m.content if isinstance(b, TextContent))
        for m in runtime.session.messages
        if isinstance(m, ToolResultMessage)
    ]


async def call_greet(runtime: AgentSessionRuntime, harness: Harness) -> None:
    harness.script(faux_assistant_message([faux_tool_call("greet", {})]), faux_assistant_message("done"))
    await runtime.session.prompt("greet me")


async def test_edited_extension_changes_the_tool_output_and_keeps_session(harness: Harness) -> None:
    path = harness.agent_dir / "extensions" / "greeter.py"
    write_extension(path, reply="hello v1")
    runtime = await build(harness)
    session, model = runtime.session, runtime.session.model
    await call_greet(runtime, harness)

    write_extension(path, reply="hello v2", command="hi", key="h", snippet="Greet anew")
    result = await runtime.reload()
    await call_greet(runtime, harness)

    assert result.errors == []
    assert tool_outputs(runtime) == ["hello v1", "hello v2"]
    assert runtime.session is session and session.model == model
    assert len([m for m in session.messages if m.role == "user"]) == 2
    runner = runtime.extension_runner
    assert runner is not None
    assert [c.invocation_name for c in runner.get_commands()] == ["hi"]
    assert [s.key for s in runner.get_shortcuts()] == ["ctrl+h"]
    assert [f.name for f in runner.get_flags()] == ["hi-flag"]
    assert "- greet: Greet anew" in session.agent.state.system_prompt
    assert [c["name"] for c in session.get_commands() if c.get("source") == "extension"] == ["hi"]


async def test_broken_edit_is_reported_and_its_registrations_are_gone(harness: Harness) -> None:
    path = harness.agent_dir / "extensions" / "greeter.py"
    write_extension(path, reply="hello v1")
    runtime = await build(harness)
    runner = runtime.extension_runner
    assert runner is not None
    reported: list[tuple[str, str, str]] = []
    runner.on_error(lambda e: reported.append((e.extension_path, e.event, e.error)))

    path.write_text("def extension(pi):\n    pi.register_tool(\n", encoding="utf-8")
    result = await runtime.reload()

    assert [e.path for e in result.errors] == [str(path)]
    assert result.errors[0].error.startswith("SyntaxError")
    assert reported == [(str(path), "load", f'Failed to load extension "{path}": {result.errors[0].error}')]
    assert runner.extensions == []
    assert "greet" not in runtime.session.all_tools()
    assert "greet" not in [t.name for t in runtime.session.agent.state.tools]
    assert "- greet:" not in runtime.session.agent.state.system_prompt
    assert runner.get_commands() == [] and runner.get_shortcuts() == []

    # The app keeps running: a prompt still works, and a fixed file comes back on the next reload.
    harness.script(faux_assistant_message("still here"))
    await runtime.session.prompt("hi")
    write_extension(path, reply="hello again")
    assert (await runtime.reload()).errors == []
    await call_greet(runtime, harness)
    assert tool_outputs(runtime) == ["hello again"]


async def test_reload_events_in_order_with_reason_reload(harness: Harness) -> None:
    write_extension(harness.agent_dir / "extensions" / "greeter.py", reply="x")
    seen: list[tuple[str, str]] = []

    def inline(pi: ExtensionAPI) -> None:
        for name in ("session_shutdown", "resources_discover", "session_start"):
            pi.on(name, lambda event, ctx: seen.append((f"inline:{event.type}", event.reason)))
        pi.events.on("seen", lambda data: seen.append((f"file:{data[0]}", data[1])))

    runtime = await build(harness, inline=(InlineExtension(inline, "watcher"),))
    assert seen == [("file:session_start", "startup"), ("inline:session_start", "startup")]
    seen.clear()

    await runtime.reload()

    # The file extension's handlers of the old import see the shutdown; the fresh import sees the rest.
    assert seen == [
        ("file:session_shutdown", "reload"),
        ("inline:session_shutdown", "reload"),
        ("file:resources_discover", "reload"),
        ("inline:resources_discover", "reload"),
        ("file:session_start", "reload"),
        ("inline:session_start", "reload"),
    ]


async def test_edited_agents_md_reaches_the_next_request(harness: Harness) -> None:
    agents = harness.cwd / "AGENTS.md"
    agents.write_text("Always answer in French.", encoding="utf-8")
    runtime = await build(harness)
    seen = Seen()
    harness.script(seen.reply(faux_assistant_message("one")), seen.reply(faux_assistant_message("two")))
    await runtime.session.prompt("first")

    agents.write_text("Always answer in German.", encoding="utf-8")
    (harness.agent_dir / "skills" / "lint").mkdir(parents=True)
    (harness.agent_dir / "skills" / "lint" / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lints code\n---\nRun the linter.\n", encoding="utf-8"
    )
    await runtime.reload()
    await runtime.session.prompt("second")

    first, second = (c.system_prompt or "" for c in seen.contexts)
    assert "Always answer in French." in first and "German" not in first
    assert "Always answer in German." in second and "French" not in second
    assert "<name>lint</name>" in second
    options = runtime.session.system_prompt_options
    assert [f["content"] for f in options.context_files] == ["Always answer in German."]
    assert [s["name"] for s in options.skills] == ["lint"]


async def test_resources_discover_paths_are_loaded_on_reload(harness: Harness, tmp_path: Path) -> None:
    prompts = tmp_path / "ext-prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text("Review $1 carefully", encoding="utf-8")

    def inline(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda event, ctx: {"promptPaths": [str(prompts)], "themePaths": ["/t.json"]})

    runtime = await build(harness, inline=(InlineExtension(inline, "paths"),))
    await runtime.reload()

    assert runtime.session.expand_input("/review main.py") == "Review main.py carefully"
    assert runtime.extension_theme_paths == ["/t.json"]


async def test_same_size_edit_within_the_same_second_is_imported(harness: Harness) -> None:
    path = harness.agent_dir / "extensions" / "greeter.py"
    write_extension(path, reply="hello v1")
    stamp = path.stat().st_mtime_ns
    py_compile.compile(str(path), doraise=True)  # the cache a normal run writes (this suite runs without bytecode)
    runtime = await build(harness)
    write_extension(path, reply="hello v2")
    os.utime(path, ns=(stamp, stamp))  # what a cached `.pyc` is validated against: same mtime and size

    await runtime.reload()
    await call_greet(runtime, harness)

    assert tool_outputs(runtime) == ["hello v2"]


async def test_files_added_or_deleted_since_startup_are_picked_up(harness: Harness) -> None:
    first = harness.agent_dir / "extensions" / "greeter.py"
    write_extension(first, reply="one")
    runtime = await build(harness)
    runner = runtime.extension_runner
    assert runner is not None

    second = harness.agent_dir / "extensions" / "zeta.py"
    write_extension(second, reply="two", command="zeta")
    result = await runtime.reload()
    assert result.errors == []
    assert [e.path for e in runner.extensions] == [str(first), str(second)]
    assert [c.invocation_name for c in runner.get_commands()] == ["hello", "zeta"]
    assert [d.message for d in result.diagnostics] == [f'Tool "greet" conflicts with {first}']

    first.unlink()
    result = await runtime.reload()
    assert result.errors == []
    assert [e.path for e in runner.extensions] == [str(second)]
    await call_greet(runtime, harness)
    assert tool_outputs(runtime) == ["two"]
