"""Acceptance checks 11, 13 and 14 of resources.md end to end: extensions loaded into a real session that talks to
the scripted faux provider and writes its session file to disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apex_ai.models import ModelRegistry
from apex_ai.providers.faux import FauxProvider, faux_assistant_message, faux_tool_call
from apex_ai.types import AssistantMessage, Context, TextContent, ToolResultMessage
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import ExtensionAPI, InlineExtension, ToolDefinition
from apex_coding_agent.runtime import AgentSession, create_agent_session
from apex_coding_agent.session import SessionManager


class World:
    """A faux model in a private registry, a tmp cwd/agent dir and the contexts the model was sent."""

    def __init__(self, root: Path) -> None:
        self.cwd = root / "work"
        self.cwd.mkdir()
        self.agent_dir = root / "agent"
        self.faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
        registry = ModelRegistry(load_catalog=False)
        registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=self.faux.models)
        self.model_runtime = ModelRuntime(None, AuthStorage.in_memory(), registry=registry)
        self.contexts: list[Context] = []

    def reply(self, message: AssistantMessage) -> Any:  # Any: a FauxStep function
        def step(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
            self.contexts.append(context.model_copy(deep=True))
            return message

        return step

    async def session(self, *factories: Any, manager: SessionManager | None = None) -> AgentSession:
        result = await create_agent_session(
            cwd=str(self.cwd),
            agent_dir=str(self.agent_dir),
            model=self.faux.model("faux-1"),
            session_manager=manager or SessionManager.in_memory(str(self.cwd)),
            settings_manager=SettingsManager.in_memory({}),
            model_runtime=self.model_runtime,
            permission_gate=PermissionGate(self.cwd, flag_mode="bypassPermissions"),
            project_trusted=True,
            extensions=[InlineExtension(f, f"ext{i}") for i, f in enumerate(factories)],
        )
        assert result.extensions_result is not None and result.extensions_result.errors == []
        return result.session


def texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def echo_tool() -> ToolDefinition:
    async def run(tool_call_id: str, params: Any, *rest: Any) -> str:
        return f"echo {params['text']}"

    return ToolDefinition(
        name="echo",
        description="Echo the text",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=run,
    )


async def test_check_11_blocking_and_raising_tool_call_handlers_give_error_results(tmp_path: Path) -> None:
    world = World(tmp_path)
    executed: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        tool = echo_tool()
        inner = tool.execute

        async def counting(tool_call_id: str, params: Any, *rest: Any) -> Any:
            executed.append(params["text"])
            return await inner(tool_call_id, params, *rest)

        tool.execute = counting
        pi.register_tool(tool)

        @pi.on("tool_call")
        def guard(event: Any, ctx: Any) -> dict[str, Any] | None:
            if event.input.get("text") == "blocked":
                return {"block": True, "reason": "no"}
            if event.input.get("text") == "crash":
                raise RuntimeError("handler bug")
            return None

    session = await world.session(ext)
    world.faux.set_responses(
        [
            world.reply(
                faux_assistant_message(
                    [
                        faux_tool_call("echo", {"text": "fine"}, id="a"),
                        faux_tool_call("echo", {"text": "blocked"}, id="b"),
                        faux_tool_call("echo", {"text": "crash"}, id="c"),
                    ],
                    stop_reason="toolUse",
                )
            ),
            world.reply(faux_assistant_message("done")),
        ]
    )
    await session.prompt("go")
    results = {m.tool_call_id: m for m in session.messages if isinstance(m, ToolResultMessage)}
    assert (results["a"].is_error, texts(results["a"].content)) == (False, "echo fine")
    assert (results["b"].is_error, texts(results["b"].content)) == (True, "no")
    assert results["c"].is_error and "handler bug" in texts(results["c"].content)
    assert executed == ["fine"]  # neither blocked call reached the tool


async def test_check_13_prompt_override_is_per_run_and_context_edits_stay_out_of_the_session_file(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)

    def ext(pi: ExtensionAPI) -> None:
        @pi.on("before_agent_start")
        def override(event: Any, ctx: Any) -> dict[str, Any] | None:
            return {"systemPrompt": "ONE RUN ONLY"} if event.prompt == "first" else None

        @pi.on("context")
        def drop_history(event: Any, ctx: Any) -> dict[str, Any]:
            return {"messages": event.messages[-1:]}  # only the newest message reaches the model

    manager = SessionManager.create(str(world.cwd), tmp_path / "sessions")
    session = await world.session(ext, manager=manager)
    base = session.base_system_prompt
    world.faux.set_responses([world.reply(faux_assistant_message("one")), world.reply(faux_assistant_message("two"))])
    await session.prompt("first")
    await session.prompt("second")

    assert [c.system_prompt for c in world.contexts] == ["ONE RUN ONLY", base]
    assert [[texts(m.content) for m in c.messages] for c in world.contexts] == [["first"], ["second"]]
    assert manager.session_file is not None
    text = manager.session_file.read_text()
    records = [json.loads(line) for line in text.splitlines()]
    stored = [texts_of(r["message"]) for r in records if r.get("type") == "message"]
    # The leading system message records the base prompt: the per-run replacement never reaches the file.
    assert stored == [base, "first", "one", "second", "two"]
    assert "ONE RUN ONLY" not in text


def texts_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


async def test_check_14_two_review_commands_get_numbered_invocation_names(tmp_path: Path) -> None:
    world = World(tmp_path)
    seen_apis: list[ExtensionAPI] = []

    def reviewer(tag: str) -> Any:
        def factory(pi: ExtensionAPI) -> None:
            seen_apis.append(pi)
            pi.register_command("review", lambda args, ctx: None, description=f"Review {tag}")

        return factory

    await world.session(reviewer("one"), reviewer("two"))
    commands = seen_apis[0].get_commands()
    assert [(c["name"], c.get("description")) for c in commands if c.get("source") == "extension"] == [
        ("review:1", "Review one"),
        ("review:2", "Review two"),
    ]
    assert seen_apis[1].get_commands() == commands
