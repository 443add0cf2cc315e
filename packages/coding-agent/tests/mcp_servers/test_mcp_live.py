"""Real MCP servers (stdio and streamable HTTP) behind a real session with the faux model: tools, schema errors,
tool errors, truncation, images, list changes at the next turn boundary, timeouts, a crash mid-call and the
restart after it, a server that never answers `initialize`, status events, and the process group killed at quit."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import demo_config, pid_alive, started_pids

from apex_ai.models import ModelRegistry
from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxProvider, FauxState, faux_assistant_message, faux_tool_call
from apex_ai.transcript import current_system_message
from apex_ai.types import AssistantMessage, Context, ImageContent, Model, TextContent
from apex_coding_agent.core.auth_storage import AuthStorage
from apex_coding_agent.core.model_runtime import ModelRuntime
from apex_coding_agent.core.permissions import PermissionGate
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import InputRejectedError, NoUi
from apex_coding_agent.mcp_servers import McpHost, bind_mcp_runtime, create_mcp_extension
from apex_coding_agent.runtime import AgentSessionRuntime, SessionEvent, create_agent_session
from apex_coding_agent.session import SessionManager


async def _runtime(
    tmp_path: Path, host: McpHost, faux: FauxProvider, *, project_trusted: bool | None = None
) -> AgentSessionRuntime:
    registry = ModelRegistry(load_catalog=False)
    registry.register_provider("faux", api="faux", base_url="http://localhost:0", models=faux.models)
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    result = await create_agent_session(
        cwd=str(cwd),
        agent_dir=str(tmp_path / "agent"),
        model=faux.model("faux-1"),
        session_manager=SessionManager.in_memory(str(cwd)),
        settings_manager=SettingsManager.in_memory({}),
        model_runtime=ModelRuntime(None, AuthStorage.in_memory(), registry=registry),
        permission_gate=PermissionGate(cwd, flag_mode="bypassPermissions"),
        extensions=[create_mcp_extension(host)],
        project_trusted=project_trusted,
    )
    runtime = AgentSessionRuntime(result)
    bind_mcp_runtime(host, runtime)
    await runtime.start_extensions()
    return runtime


async def _until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def _results(events: list[SessionEvent]) -> dict[str, Any]:  # Any: ToolExecutionEndEvent
    return {e.tool_call_id: e for e in events if e.type == "tool_execution_end"}  # type: ignore[union-attr]


def _text(event: Any) -> str:  # Any: ToolExecutionEndEvent
    return "".join(b.text for b in event.result.content if isinstance(b, TextContent))


async def test_stdio_server_through_a_session(tmp_path: Path) -> None:
    marker = tmp_path / "started.txt"
    host = McpHost(
        tmp_path / "agent",
        servers={
            "demo": demo_config(timeoutMs=4000, env={"APEX_TEST_MCP_MARKER": str(marker)}),
            "off": {"command": "never-run", "enabled": False},
        },
        read_config=False,
    )
    statuses: list[tuple[str, str]] = []
    host.subscribe(lambda e: statuses.append((e.server, e.status)))
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    runtime = await _runtime(tmp_path, host, faux)
    events: list[SessionEvent] = []
    runtime.session.subscribe(events.append)
    await host.wait_ready()
    assert host.statuses["demo"] == ("connected", None) and host.statuses["off"] == ("disabled", None)
    tools = runtime.session.agent.state.tools
    names = {t.name for t in tools}
    assert {"mcp__demo__echo", "mcp__demo__add", "mcp__demo__crash"} <= names and "read" in names
    echo = next(t for t in tools if t.name == "mcp__demo__echo")
    assert echo.parameters["required"] == ["text"] and echo.read_only  # type: ignore[attr-defined]

    seen_tools: list[list[str]] = []

    def use_extra(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        seen_tools.append([t.name for t in context.tools or []])
        # What the session recorded by now is exactly what this request declares.
        recorded = current_system_message(runtime.session.session_manager.build_session_context().messages)
        assert recorded is not None and recorded.tools_added == context.tools
        return faux_assistant_message([faux_tool_call("mcp__demo__extra", {}, id="extra")])

    calls = [
        faux_tool_call("mcp__demo__echo", {"text": "hi"}, id="ok"),
        faux_tool_call("mcp__demo__echo", {"text": {"a": 1}}, id="schema"),
        faux_tool_call("mcp__demo__add", {"a": 2}, id="missing"),
        faux_tool_call("mcp__demo__fail", {"reason": "r1"}, id="fail"),
        faux_tool_call("mcp__demo__lines", {"count": 2600}, id="lines"),
        faux_tool_call("mcp__demo__picture", {}, id="picture"),
    ]
    faux.set_responses(
        [
            faux_assistant_message(calls),
            faux_assistant_message([faux_tool_call("mcp__demo__slow", {"seconds": 30}, id="slow")]),
            faux_assistant_message([faux_tool_call("mcp__demo__grow", {}, id="grow")]),
            use_extra,
            faux_assistant_message("done"),
        ]
    )
    await runtime.session.prompt("go")  # the tool `grow` adds joins at the next turn of the same run
    results = _results(events)
    assert _text(results["ok"]) == "echo: hi" and not results["ok"].is_error
    assert results["schema"].is_error and "text: {'a': 1} is not of type 'string'" in _text(results["schema"])
    assert results["missing"].is_error and "must have required property 'b'" in _text(results["missing"])
    assert results["fail"].is_error and "failed on purpose: r1" in _text(results["fail"])
    lines = _text(results["lines"])
    assert not results["lines"].is_error and "[Output truncated: 2000 of 2600 lines" in lines
    picture = results["picture"].result.content
    assert [type(b) for b in picture] == [TextContent, ImageContent] and picture[1].mime_type == "image/png"
    assert results["slow"].is_error and "did not answer tools/call slow within 4s" in _text(results["slow"])
    assert "mcp__demo__extra" in seen_tools[0]
    branch = runtime.session.session_manager.build_session_context().messages
    delta = [m for m in branch if m.role == "system"][-1]
    assert [t.name for t in delta.tools_added or []] == ["mcp__demo__extra"]  # recorded as a system-message delta
    assert [m.role for m in branch[branch.index(delta) - 1 : branch.index(delta) + 2]] == [
        "toolResult",  # of `grow`
        "system",
        "assistant",  # the turn that could call the new tool
    ]
    assert _text(results["extra"]).startswith("extra at") and not results["extra"].is_error

    # A crash mid-call is a tool error; the server is started again and answers.
    (first_pid,) = started_pids(marker)
    faux.set_responses(
        [faux_assistant_message([faux_tool_call("mcp__demo__crash", {}, id="crash")]), faux_assistant_message("ok")]
    )
    await runtime.session.prompt("crash it")
    crash = _results(events)["crash"]
    assert crash.is_error and 'MCP server "demo"' in _text(crash)
    await _until(lambda: host.statuses["demo"][0] == "connected" and len(started_pids(marker)) == 2, "the restart")
    assert ("demo", "restarting") in statuses and statuses[-1] == ("demo", "connected")
    assert [e.status for e in events if e.type == "mcp_server_status"][-2:] == ["restarting", "connected"]  # type: ignore[union-attr]
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("mcp__demo__echo", {"text": "again"}, id="again")]),
            faux_assistant_message("ok"),
        ]
    )
    await runtime.session.prompt("again")
    assert _text(_results(events)["again"]) == "echo: again"

    log = (tmp_path / "agent" / "mcp-logs" / "demo.log").read_text(encoding="utf-8")
    assert "crashing now" in log and log.count("demo server starting") == 2  # stderr went to the log, twice
    second_pid = started_pids(marker)[1]
    assert not pid_alive(first_pid) and pid_alive(second_pid)
    await runtime.shutdown_extensions()
    await runtime.dispose()
    assert not pid_alive(second_pid) and host.statuses["demo"][0] == "closed"


async def test_a_server_ready_after_the_first_request_joins_the_running_loop(tmp_path: Path) -> None:
    go = tmp_path / "go"
    host = McpHost(
        tmp_path / "agent", servers={"late": demo_config(env={"APEX_TEST_MCP_WAIT_FOR": str(go)})}, read_config=False
    )
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    runtime = await _runtime(tmp_path, host, faux)
    assert runtime.extension_runner is not None
    runtime.extension_runner.set_ui(NoUi(), "rpc")  # as in the app and RPC: a prompt does not wait for servers
    seen: list[list[str]] = []

    async def first(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        seen.append([t.name for t in context.tools or []])
        go.touch()  # the server answers from now on
        await _until(lambda: host.statuses.get("late", ("",))[0] == "connected", "the late server")
        return faux_assistant_message([faux_tool_call("read", {"path": "."}, id="r1")])

    def then(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        seen.append([t.name for t in context.tools or []])
        recorded = current_system_message(runtime.session.session_manager.build_session_context().messages)
        assert recorded is not None and recorded.tools_added == context.tools
        return faux_assistant_message([faux_tool_call("mcp__late__echo", {"text": "in time"}, id="e1")])

    events: list[SessionEvent] = []
    runtime.session.subscribe(events.append)
    faux.set_responses([first, then, faux_assistant_message("done")])
    await runtime.session.prompt("go")
    assert not any(name.startswith("mcp__late__") for name in seen[0])
    assert "mcp__late__echo" in seen[1]  # the next turn of the same run
    assert _text(_results(events)["e1"]) == "echo: in time"
    await runtime.shutdown_extensions()
    await runtime.dispose()


async def test_http_server_and_servers_that_fail_to_start(tmp_path: Path, http_server: str) -> None:
    host = McpHost(
        tmp_path / "agent",
        servers={
            "web": {"url": http_server, "headers": {"X-Test": "1"}},
            "mute": demo_config(args=[demo_config()["args"][0], "mute"], startupTimeoutMs=1000),  # type: ignore[index]
            "missing": {"command": str(tmp_path / "no-such-server")},
            "nourl": {"url": "http://127.0.0.1:9/mcp", "startupTimeoutMs": 3000},
        },
        read_config=False,
    )
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    runtime = await _runtime(tmp_path, host, faux)
    await host.wait_ready()
    assert host.statuses["web"] == ("connected", None)
    assert host.statuses["mute"] == ("failed", "did not answer initialize within 1s")
    status, error = host.statuses["missing"]
    assert status == "failed" and error is not None and "no-such-server" in error
    assert host.statuses["nourl"][0] == "failed"
    names = {t.name for t in runtime.session.agent.state.tools}
    assert "mcp__web__echo" in names and not any(n.startswith(("mcp__mute", "mcp__missing")) for n in names)
    events: list[SessionEvent] = []
    runtime.session.subscribe(events.append)
    faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("mcp__web__add", {"a": 2, "b": 3}, id="add")]),
            faux_assistant_message("5"),
        ]
    )
    await runtime.session.prompt("add")
    assert _text(_results(events)["add"]) == "5"
    snapshot = {s["name"]: s for s in host.snapshot()}
    assert snapshot["web"]["transport"] == "http" and "mcp__web__echo" in snapshot["web"]["tools"]
    assert snapshot["web"]["prompts"] == ["review"] and snapshot["web"]["resources"] == ["note://hello"]
    assert snapshot["mute"]["status"] == "failed" and snapshot["mute"]["logFile"].endswith("mute.log")
    assert host.reconnect("missing") and not host.reconnect("nothing-such")  # tried anew, and fails again
    await host.wait_ready()
    assert host.statuses["missing"][0] == "failed" and host.connections["missing"].restarts == 0
    await runtime.shutdown_extensions()
    await runtime.dispose()


async def test_prompts_and_resources_expand_in_the_input(tmp_path: Path, http_server: str) -> None:
    host = McpHost(tmp_path / "agent", servers={"web": {"url": http_server}}, read_config=False)
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    runtime = await _runtime(tmp_path, host, faux)
    await host.wait_ready()
    sent: list[str] = []

    def record(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        last = context.messages[-1]
        sent.append("".join(b.text for b in last.content if isinstance(b, TextContent)))  # type: ignore[union-attr]
        return faux_assistant_message("ok")

    faux.set_responses([record, record, record])
    await runtime.session.prompt("/mcp:web:review src/app.py")
    await runtime.session.prompt('/mcp:web:review focus=speed "a b.py"')
    await runtime.session.prompt("summarize @web:note://hello please")
    assert sent[0] == "Please review src/app.py, looking for bugs."
    assert sent[1] == "Please review a b.py, looking for speed."
    assert sent[2].startswith('summarize @web:note://hello please\n\n<resource server="web" uri="note://hello">')
    assert "hello from the note" in sent[2]
    # A missing argument, an unknown prompt or server: the prompt fails with the reason, nothing is sent.
    for text, reason in [
        ("/mcp:web:review", "/mcp:web:review: missing argument(s): path"),
        ("/mcp:web:nope x", "/mcp:web:nope: the server has no such prompt (prompts: review)"),
        ("/mcp:gone:review a", '/mcp:gone:review: the MCP server "gone" is not configured'),
    ]:
        with pytest.raises(InputRejectedError) as failed:
            await runtime.session.prompt(text)
        assert str(failed.value) == reason
    assert len(sent) == 3 and not runtime.extension_runner.errors  # type: ignore[union-attr]
    await runtime.shutdown_extensions()
    await runtime.dispose()


async def test_reload_starts_added_stops_removed_restarts_changed_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    marker = {name: tmp_path / f"{name}.started" for name in ("keep", "change", "gone", "added", "project")}

    def server(name: str, **env: str) -> dict[str, object]:
        return demo_config(env={"APEX_TEST_MCP_MARKER": str(marker[name]), **env})

    def write(servers: dict[str, object], path: Path = agent / "mcp.json") -> None:
        path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    write({"keep": server("keep"), "change": server("change"), "gone": server("gone")})
    host = McpHost(agent)
    faux = FauxProvider(models=[{"id": "faux-1", "contextWindow": 200000}])
    runtime = await _runtime(tmp_path, host, faux, project_trusted=True)
    await host.wait_ready()
    pids = {name: started_pids(marker[name]) for name in ("keep", "change", "gone")}
    assert all(len(found) == 1 for found in pids.values()), pids

    write({"keep": server("keep"), "change": server("change", DEMO_FLAVOUR="2"), "added": server("added")})
    # A project file that appeared after the session decided the project's trust is not read (trust not saved).
    write({"project": server("project")}, work / ".mcp.json")
    await runtime.reload()
    await host.wait_ready()
    assert {s["name"]: s["status"] for s in host.snapshot()} == {
        "keep": "connected",
        "change": "connected",
        "added": "connected",
    }
    assert started_pids(marker["keep"]) == pids["keep"] and pid_alive(pids["keep"][0])  # left connected
    changed = started_pids(marker["change"])
    assert len(changed) == 2 and not pid_alive(changed[0]) and pid_alive(changed[1])  # restarted
    assert not pid_alive(pids["gone"][0]) and len(started_pids(marker["gone"])) == 1  # stopped
    assert not marker["project"].exists() and host.skipped_untrusted == [str(work / ".mcp.json")]
    active = {t.name for t in runtime.session.agent.state.tools}
    assert {"mcp__keep__echo", "mcp__change__echo", "mcp__added__echo"} <= active  # the restarted one's come back
    assert not any(name.startswith("mcp__gone__") for name in active)

    # A typo while editing loses nothing: a file that is not JSON, or an entry that is wrong, keeps what runs.
    capsys.readouterr()
    (agent / "mcp.json").write_text('{"mcpServers": {"keep": ', encoding="utf-8")
    await runtime.reload()
    write({"keep": {"command": 42}, "change": server("change", DEMO_FLAVOUR="2"), "added": server("added")})
    await runtime.reload()
    err = capsys.readouterr().err
    assert f"{agent / 'mcp.json'}: not valid JSON" in err and 'MCP server "keep": command: ' in err
    assert err.count('MCP server "keep" keeps running with its previous settings') == 2
    assert {s["name"] for s in host.snapshot()} == {"keep", "change", "added"}
    assert started_pids(marker["keep"]) == pids["keep"] and pid_alive(pids["keep"][0])
    assert len(started_pids(marker["change"])) == 2 and len(started_pids(marker["added"])) == 1
    write({"keep": server("keep"), "change": server("change", DEMO_FLAVOUR="2"), "added": server("added")})

    # With the project's trust saved, the new file is read at the next reload.
    (agent / "trust.json").write_text(json.dumps({str(work.resolve()): True}), encoding="utf-8")
    await runtime.reload()
    await host.wait_ready()
    assert host.statuses["project"] == ("connected", None) and len(started_pids(marker["project"])) == 1
    assert started_pids(marker["keep"]) == pids["keep"] and len(started_pids(marker["change"])) == 2
    await runtime.shutdown_extensions()
    await runtime.dispose()
    assert not any(pid_alive(pid) for name in marker for pid in started_pids(marker[name]))


def test_without_the_sdk_a_configured_server_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from apex_coding_agent.mcp_servers import host as host_module

    monkeypatch.setattr(host_module, "sdk_installed", lambda: False)
    host = McpHost(tmp_path, servers={"a": {"command": "x"}, "b": {"url": "http://b"}}, read_config=False)
    host.configure(str(tmp_path), project_trusted=False)
    host.start(None)
    assert host.warnings == [
        "MCP servers configured (a, b) but the mcp package is missing: pip install 'apex-coding-agent[mcp]'"
    ]
    assert host.connections == {} and host.statuses["a"][0] == "failed"


_ = sys  # the demo server runs on this interpreter
