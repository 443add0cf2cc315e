"""The `pi` API: session binding, queued providers, exec, the shared bus, stale contexts."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import pytest

from apex_ai.abort import AbortController, AbortSignal
from apex_ai.models import ModelRegistry
from apex_ai.types import ImageContent, Model, TextContent
from apex_coding_agent.extensions import (
    ExtensionNotBoundError,
    ExtensionRunner,
    ExtensionRuntime,
    InlineExtension,
    SessionBinding,
    StaleContextError,
    load_extensions,
)
from apex_coding_agent.extensions.api import ExtensionAPI


class RecordingSession:
    """A minimal host implementing `SessionBinding`: records what extensions asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.name: str | None = None
        self.active = ["read"]
        self.level = "medium"
        self.registry = ModelRegistry(load_catalog=False)
        self.current_model: Model | None = None

    def send_message(self, message: dict[str, Any], deliver_as: Any, trigger_turn: bool) -> None:
        self.calls.append(("send_message", message, deliver_as, trigger_turn))

    def send_user_message(self, content: str | list[TextContent | ImageContent], deliver_as: Any) -> None:
        self.calls.append(("send_user_message", content, deliver_as))

    def append_entry(self, custom_type: str, data: Any) -> None:
        self.calls.append(("append_entry", custom_type, data))

    def set_session_name(self, name: str) -> None:
        self.name = name

    def get_session_name(self) -> str | None:
        return self.name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.calls.append(("set_label", entry_id, label))

    def get_active_tools(self) -> list[str]:
        return list(self.active)

    def get_all_tools(self) -> list[dict[str, Any]]:
        return [{"name": "read", "description": "Read", "parameters": {}}]

    def set_active_tools(self, names: Sequence[str]) -> None:
        self.active = list(names)

    def refresh_tools(self) -> None:
        self.calls.append(("refresh_tools",))

    async def set_model(self, model: Model) -> bool:
        self.current_model = model
        return True

    def get_thinking_level(self) -> str:
        return self.level

    def set_thinking_level(self, level: str) -> None:
        self.level = level

    def get_resource_commands(self) -> list[dict[str, Any]]:
        return [{"name": "tmpl", "source": "prompt", "sourceInfo": {}}]

    cwd = "/session/cwd"
    session_manager = None
    scoped_models: list[Any] = []
    signal: AbortSignal | None = None

    @property
    def model_registry(self) -> ModelRegistry:
        return self.registry

    @property
    def model(self) -> Model | None:
        return self.current_model

    def is_project_trusted(self) -> bool:
        return True

    def is_idle(self) -> bool:
        return True

    def abort(self) -> None:
        self.calls.append(("abort",))

    def has_pending_messages(self) -> bool:
        return False

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))

    def get_context_usage(self) -> Any:
        return None

    def compact(self, custom_instructions: str | None, on_complete: Any, on_error: Any) -> None:
        self.calls.append(("compact", custom_instructions))

    def get_system_prompt(self) -> str:
        return "SYSTEM"


async def load_one(factory: Any) -> tuple[ExtensionRuntime, ExtensionAPI]:
    captured: list[ExtensionAPI] = []

    def wrapper(pi: ExtensionAPI) -> Any:
        captured.append(pi)
        return factory(pi)

    runtime, result = await load_extensions(inline=[InlineExtension(wrapper, "ext")])
    assert result.errors == []
    return runtime, captured[0]


async def test_session_actions_raise_before_binding_and_delegate_after() -> None:
    runtime, pi = await load_one(lambda pi: None)
    with pytest.raises(ExtensionNotBoundError, match="session actions cannot be called from the extension factory"):
        pi.get_session_name()
    session = RecordingSession()
    binding: SessionBinding = session
    runtime.bind_session(binding)

    pi.set_session_name("named")
    assert pi.get_session_name() == "named"
    pi.send_message({"customType": "note", "content": "hi", "details": {"k": 1}}, deliver_as="nextTurn")
    pi.send_user_message("go", deliver_as="followUp")
    pi.append_entry("state", {"n": 1})
    pi.set_label("e1", None)
    pi.set_active_tools(["read", "bash"])
    assert pi.get_active_tools() == ["read", "bash"]
    pi.set_thinking_level("high")
    assert pi.get_thinking_level() == "high"
    model = Model(id="m", api="openai-completions", provider="p")
    assert await pi.set_model(model) is True and session.current_model == model
    assert [c["name"] for c in pi.get_commands()] == ["tmpl"]
    assert session.calls[:3] == [
        (
            "send_message",
            {"customType": "note", "content": "hi", "display": True, "details": {"k": 1}},
            "nextTurn",
            False,
        ),
        ("send_user_message", "go", "followUp"),
        ("append_entry", "state", {"n": 1}),
    ]
    with pytest.raises(ValueError):
        pi.send_message({"content": "no custom type"})


async def test_factory_calling_a_session_action_is_a_load_error() -> None:
    _, result = await load_extensions(inline=[InlineExtension(lambda pi: pi.append_entry("x"), "eager")])
    assert result.extensions == []
    assert result.errors[0].error.startswith("ExtensionNotBoundError: Extension runtime not initialized")


async def test_tool_registered_after_binding_refreshes_tools() -> None:
    runtime, pi = await load_one(lambda pi: None)
    session = RecordingSession()
    runtime.bind_session(session)

    async def run(*args: Any) -> str:
        return "late"

    from apex_coding_agent.extensions import ToolDefinition

    pi.register_tool(ToolDefinition(name="late", description="d", execute=run))
    assert session.calls == [("refresh_tools",)]
    assert [t.name for t in ExtensionRunner(runtime).get_tools()] == ["late"]


async def test_providers_are_queued_until_flushed() -> None:
    def factory(pi: ExtensionAPI) -> None:
        pi.register_provider(
            "local",
            {
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "models": [{"id": "a", "contextWindow": 4096}],
            },
        )
        pi.register_provider({"name": "gone", "api": "openai-completions", "models": [{"id": "b"}]})
        pi.unregister_provider("gone")
        pi.register_provider("broken", {"models": [{"id": "no-api"}]})

    runtime, pi = await load_one(factory)
    assert [p.name for p in runtime.pending_providers] == ["local", "gone", "gone", "broken"]
    registry = ModelRegistry(load_catalog=False)
    runner = ExtensionRunner(runtime)
    runner.flush_providers(registry)
    [model] = registry.list_models("local")
    assert (model.id, model.base_url, model.context_window) == ("a", "http://127.0.0.1:9/v1", 4096)
    assert registry.get_provider("gone") is None
    assert [(e.event, e.extension_path) for e in runner.errors] == [("register_provider", "ext")]
    # After the flush, registrations apply at once.
    pi.register_provider("later", {"api": "openai-completions", "models": [{"id": "c"}]})
    assert [m.id for m in registry.list_models("later")] == ["c"]


async def test_flags_default_and_cli_value() -> None:
    def factory(pi: ExtensionAPI) -> None:
        pi.register_flag("plan", type="boolean", default=False, description="Plan mode")

    runtime, pi = await load_one(factory)
    runner = ExtensionRunner(runtime)
    assert pi.get_flag("plan") is False
    runner.set_flag_value("plan", True)
    assert pi.get_flag("plan") is True
    assert pi.get_flag("unregistered") is None
    assert [(f.name, f.description) for f in runner.get_flags()] == [("plan", "Plan mode")]


async def test_exec_collects_output_and_kills_on_timeout_or_abort(tmp_path: Any) -> None:
    runtime, pi = await load_one(lambda pi: None)
    runtime.cwd = str(tmp_path)
    done = await pi.exec(
        sys.executable, ["-c", "import os,sys; print(os.getcwd()); sys.stderr.write('e'); sys.exit(3)"]
    )
    assert done.to_json() == {"stdout": f"{tmp_path}\n", "stderr": "e", "code": 3, "killed": False}

    slow = ["-c", "import time; time.sleep(30)"]
    timed_out = await pi.exec(sys.executable, slow, timeout=50)
    assert timed_out.killed is True and timed_out.code != 0

    controller = AbortController()
    controller.abort()
    aborted = await pi.exec(sys.executable, slow, signal=controller.signal)
    assert aborted.killed is True


async def test_event_bus_delivers_and_reports_listener_errors() -> None:
    runtime, pi = await load_one(lambda pi: None)
    runner = ExtensionRunner(runtime)
    got: list[Any] = []
    unsubscribe = pi.events.on("ping", got.append)
    pi.events.on("ping", lambda data: 1 / 0)
    pi.events.emit("ping", {"n": 1})
    unsubscribe()
    pi.events.emit("ping", {"n": 2})
    assert got == [{"n": 1}]
    assert [e.event for e in runner.errors] == ["events:ping", "events:ping"]


async def test_context_members_and_staleness_after_rebinding() -> None:
    runtime, _ = await load_one(lambda pi: None)
    runner = ExtensionRunner(runtime, mode="rpc")
    session = RecordingSession()
    runtime.bind_session(session)
    ctx = runner.create_command_context()
    assert (ctx.cwd, ctx.mode, ctx.has_ui, ctx.get_system_prompt(), ctx.thinking_level) == (
        "/session/cwd",
        "rpc",
        True,
        "SYSTEM",
        "medium",
    )
    ctx.compact("focus")
    assert session.calls == [("compact", "focus")]
    with pytest.raises(RuntimeError, match="not available in this mode"):
        await ctx.wait_for_idle()
    runtime.bind_session(RecordingSession())
    with pytest.raises(StaleContextError):
        ctx.abort()
    assert runner.create_context().is_idle() is True


async def test_unknown_event_name_is_rejected() -> None:
    _, pi = await load_one(lambda pi: None)
    with pytest.raises(ValueError, match="Unknown extension event: on_start"):
        pi.on("on_start", lambda e, c: None)
