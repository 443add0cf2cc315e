"""A session runtime's model requests share keep-alive connections: every turn of a run, and the sessions that
follow `/new`, reuse one TCP connection to the provider; `dispose()` closes it. Real SDK, local scripted server."""

from __future__ import annotations

from pathlib import Path

from apex_ai.models import ModelRegistry
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.runtime import AgentSessionRuntime, create_agent_session_runtime
from apex_coding_agent.session import SessionManager

TOOL_TURN: dict[str, object] = {
    "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
    "usage": {"input": 5, "output": 3},
}
ANSWER: dict[str, object] = {"text": "Done.", "usage": {"input": 9, "output": 2}, "repeat": True}


async def _runtime(tmp_path: Path, server: ScriptedModelServer) -> AgentSessionRuntime:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider(
        "scripted",
        api="openai-completions",
        base_url=server.openai_base_url,
        models=[{"id": "local-model", "contextWindow": 100000, "maxTokens": 1024}],
    )
    auth = AuthStorage.in_memory()
    auth.set_runtime_key("scripted", "sk-local")
    model_runtime = ModelRuntime(None, auth, registry=registry)
    cwd = tmp_path / "project"
    cwd.mkdir()
    return await create_agent_session_runtime(
        cwd=str(cwd),
        agent_dir=str(tmp_path / "agent"),
        session_manager=SessionManager.in_memory(str(cwd)),
        model_runtime=model_runtime,
        settings_manager=SettingsManager.in_memory({}),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
        model=registry.require_model("scripted", "local-model"),
    )


async def test_the_turns_of_a_run_and_the_next_session_share_one_connection(tmp_path: Path) -> None:
    with ScriptedModelServer([TOOL_TURN, ANSWER]) as server:
        runtime = await _runtime(tmp_path, server)
        try:
            await runtime.session.prompt("run echo")  # a tool-call turn, then the answer: two requests
            assert runtime.session.get_last_assistant_text() == "Done."
            pool = runtime.session.connection_pool
            await runtime.new_session()
            assert runtime.session.connection_pool is pool
            await runtime.session.prompt("again")
            assert runtime.session.get_last_assistant_text() == "Done."
        finally:
            await runtime.dispose()
        assert len(server.requests) == 3
        assert server.connections_opened == 1
    assert pool.closed


async def test_a_request_after_dispose_still_works_on_a_connection_of_its_own(tmp_path: Path) -> None:
    with ScriptedModelServer([ANSWER]) as server:
        runtime = await _runtime(tmp_path, server)
        session = runtime.session
        await session.prompt("one")
        await session.close_connections()
        await session.prompt("two")
        assert session.get_last_assistant_text() == "Done."
        await runtime.dispose()
        assert server.connections_opened == 2
