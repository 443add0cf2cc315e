"""MCP through the real `apex-code` process and the scripted model server: a tool call end to end with permission
rules, a tool that appears mid-run joining at the next turn, trust gating (an untrusted project's `.mcp.json` never runs its command), nothing of the SDK imported when no
server is configured, RPC `get_mcp_servers`, and `apex-code mcp list|get|add|remove`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_helpers import CLI, env_for, json_lines, request_prompt_and_tools, run_cli, write_models
from mcp_helpers import demo_config, pid_alive, started_pids

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_ai.transcript import current_system_message
from apex_ai.types import SystemMessage

MODULES_PROBE = """
import sys
from pathlib import Path

def extension(pi):
    def record(event, ctx):
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "apex_coding_agent")
                        and (m.split(".")[0] != "apex_coding_agent" or ".mcp_servers.connection" in m))
        Path(__file__).with_suffix(".out").write_text("\\n".join(loaded))
    pi.on("agent_end", record)
"""


def test_tool_call_end_to_end_with_permission_rules(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    agent.mkdir()
    marker = tmp_path / "started.txt"
    (agent / "mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": demo_config(env={"APEX_TEST_MCP_MARKER": str(marker)})}})
    )
    rules = [
        {"toolName": "mcp__demo__*", "behavior": "allow"},
        {"toolName": "mcp__demo__add", "behavior": "deny"},
    ]
    (agent / "permissions.json").write_text(json.dumps({"version": 1, "rules": rules}))
    calls = [
        {"name": "mcp__demo__echo", "arguments": {"text": "hi"}, "id": "echo"},
        {"name": "mcp__demo__add", "arguments": {"a": 1, "b": 2}, "id": "add"},
        {"name": "mcp__demo__lines", "arguments": {"count": "x"}, "id": "schema"},
    ]
    with ScriptedModelServer([{"tool_calls": calls}, {"text": "done"}, {"text": "reviewed"}]) as server:
        write_models(agent, server)
        # The second message is an MCP prompt used as a command.
        proc = run_cli(["--mode", "json", "--permission-mode", "default", "go", "/mcp:demo:review a.py"], work, agent)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    events = json_lines(proc.stdout)
    ends = {e["toolCallId"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["echo"]["result"]["content"] == [{"type": "text", "text": "echo: hi"}] and not ends["echo"]["isError"]
    assert ends["add"]["isError"] and "not permitted" in ends["add"]["result"]["content"][0]["text"]
    assert ends["schema"]["isError"] and "count" in ends["schema"]["result"]["content"][0]["text"]
    status = [e for e in events if e["type"] == "mcp_server_status"]
    assert status[-1] == {"type": "mcp_server_status", "server": "demo", "status": "connected", "tools": 8}
    # A one-shot run waits for its servers: the first request already declares their tools.
    first_tools = [t["function"]["name"] for t in requests[0]["body"]["tools"]]
    assert {"mcp__demo__echo", "mcp__demo__add", "read"} <= set(first_tools)
    last_user = [m for m in requests[2]["body"]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Please review a.py, looking for bugs." in json.dumps(last_user)
    assert "demo server starting" not in proc.stderr  # the server's stderr goes to its log file
    (pid,) = started_pids(marker)
    assert not pid_alive(pid)  # stopped when the run ended


def test_a_tool_that_appears_mid_run_joins_the_next_request_and_the_session_records_it(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo_config()}}))
    rules = [{"toolName": "mcp__demo", "behavior": "allow"}]
    (agent / "permissions.json").write_text(json.dumps({"version": 1, "rules": rules}))
    # `grow` adds the tool `extra` and announces `tools/list_changed` during the first turn.
    script = [
        {"tool_calls": [{"name": "mcp__demo__grow", "arguments": {}, "id": "grow"}]},
        {"tool_calls": [{"name": "mcp__demo__extra", "arguments": {}, "id": "extra"}]},
        {"text": "done"},
    ]
    with ScriptedModelServer(script) as server:
        write_models(agent, server)
        proc = run_cli(["-p", "--permission-mode", "default", "grow a tool"], work, agent)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    declared = [request_prompt_and_tools(r["body"])[1] for r in requests]
    assert "mcp__demo__grow" in declared[0] and "mcp__demo__extra" not in declared[0]
    assert declared[1] == declared[2] == [*declared[0], "mcp__demo__extra"]
    [file] = (agent / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in file.read_text().splitlines()][1:]
    roles = [e["message"]["role"] for e in entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "system", "assistant", "toolResult", "assistant"]
    messages = [e["message"] for e in entries if e["type"] == "message"]
    delta = messages[4]
    assert [t["name"] for t in delta["toolsAdded"]] == ["mcp__demo__extra"] and "toolsRemoved" not in delta
    # Replaying the recorded system messages gives exactly what each request declared.
    for request, upto in zip(declared, (1, 5, 5), strict=True):
        recorded = current_system_message(
            [SystemMessage.model_validate(m) for m in messages[:upto] if m["role"] == "system"]
        )
        assert recorded is not None and [t.name for t in recorded.tools_added or []] == request
    extra = next(m for m in messages if m["role"] == "toolResult" and m["toolCallId"] == "extra")
    assert not extra["isError"] and extra["content"][0]["text"].startswith("extra at")


def test_a_failed_mcp_prompt_in_print_mode_is_one_line_and_exit_1(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo_config()}}))
    with ScriptedModelServer([{"text": "never asked", "repeat": True}]) as server:
        write_models(agent, server)
        proc = run_cli(["-p", "--permission-mode", "default", "/mcp:demo:review"], work, agent)  # `path` is required
        requests = server.requests
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == ["/mcp:demo:review: missing argument(s): path"]
    assert requests == []  # nothing was sent


def test_untrusted_project_never_runs_its_servers_and_nothing_of_mcp_loads(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    ran = tmp_path / "ran.txt"
    (work / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"echo ran > {ran}"]}}})
    )
    probe = tmp_path / "probe.py"
    probe.write_text(MODULES_PROBE)
    with ScriptedModelServer([{"text": "hi", "repeat": True}]) as server:
        write_models(agent, server)
        untrusted = run_cli(["-p", "--permission-mode", "default", "-e", str(probe), "hello"], work, agent)
        assert untrusted.returncode == 0, untrusted.stderr
        assert "MCP" not in untrusted.stderr
        assert not ran.exists()  # never spawned, not even to look
        assert probe.with_suffix(".out").read_text() == ""  # no server configured: nothing of mcp imported
        trusted = run_cli(["-p", "--permission-mode", "default", "--approve", "hello"], work, agent)
    assert trusted.returncode == 0, trusted.stderr
    assert ran.read_text() == "ran\n"  # the same file in a trusted project does start its command
    assert 'Warning: MCP server "evil" failed: ' in trusted.stderr  # it exited instead of answering


def test_rpc_get_mcp_servers_and_status_events(tmp_path: Path, http_server: str) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"web": {"url": http_server}}}))
    with ScriptedModelServer([{"text": "hi", "repeat": True}]) as server:
        write_models(agent, server)
        proc = subprocess.Popen(
            [*CLI, "--mode", "rpc", "--permission-mode", "default"],
            cwd=work,
            env=env_for(agent),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        seen: list[dict[str, Any]] = []

        def until(kind: str) -> dict[str, Any]:
            assert proc.stdout is not None
            while True:
                line = proc.stdout.readline()
                assert line, proc.stderr.read() if proc.stderr else ""
                record: dict[str, Any] = json.loads(line)
                seen.append(record)
                if record.get("type") == kind and (kind != "mcp_server_status" or record["status"] == "connected"):
                    return record

        try:
            until("mcp_server_status")
            proc.stdin.write(b'{"id": "1", "type": "get_mcp_servers"}\n')
            proc.stdin.flush()
            response = until("response")
            proc.stdin.write(b'{"id": "2", "type": "prompt", "message": "/mcp:web:nope"}\n')
            proc.stdin.flush()
            refused = until("response")
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
            proc.stdout.close()
            if proc.stderr is not None:
                proc.stderr.close()
    assert response["success"] and response["command"] == "get_mcp_servers"
    (web,) = response["data"]["servers"]
    assert (web["name"], web["transport"], web["scope"], web["status"]) == ("web", "http", "user", "connected")
    assert "mcp__web__echo" in web["tools"] and web["prompts"] == ["review"]
    # A prompt naming an MCP prompt the server lacks is answered with the reason; no run starts.
    assert (refused["id"], refused["success"]) == ("2", False)
    assert refused["error"] == "/mcp:web:nope: the server has no such prompt (prompts: review)"
    assert not any(r.get("type") == "agent_start" for r in seen)


def _mcp(args: list[str], cwd: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    """`apex-code mcp ...` in-process (the module the `SUBCOMMANDS` table names); one test runs the real command."""
    import io
    import os

    from apex_coding_agent.mcp_servers.cli import run

    out, err = io.StringIO(), io.StringIO()
    previous_dir, previous_cwd = os.environ.get("APEX_CODE_CODING_AGENT_DIR"), os.getcwd()
    os.environ["APEX_CODE_CODING_AGENT_DIR"] = str(agent)
    os.chdir(cwd)
    try:
        code = run(args, out, err)
    finally:
        os.chdir(previous_cwd)
        if previous_dir is None:
            del os.environ["APEX_CODE_CODING_AGENT_DIR"]
        else:
            os.environ["APEX_CODE_CODING_AGENT_DIR"] = previous_dir
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_mcp_subcommands_write_and_read_the_config(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    empty = run_cli(["mcp", "list"], work, agent)  # the real command: `mcp` is a registered subcommand
    assert empty.returncode == 0 and "No MCP servers configured" in empty.stdout
    added = _mcp(["add", "gh", "--env", "TOKEN=${GH_TOKEN}", "--", "npx", "-y", "gh-server"], work, agent)
    assert added.returncode == 0 and str(agent / "mcp.json") in added.stdout
    web = _mcp(
        ["add", "web", "--scope", "project", "--header", "Authorization: Bearer $T", "--url", "http://h/mcp"],
        work,
        agent,
    )
    assert web.returncode == 0 and str(work / ".mcp.json") in web.stdout
    assert json.loads((agent / "mcp.json").read_text()) == {
        "mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-server"], "env": {"TOKEN": "${GH_TOKEN}"}}}
    }
    listed = _mcp(["list"], work, agent)
    assert "gh  stdio  npx -y gh-server  [user:" in listed.stdout
    assert "web  http  http://h/mcp  [project:" in listed.stdout and "not trusted" in listed.stdout
    got = json.loads(_mcp(["get", "web"], work, agent).stdout)
    assert got["headers"] == {"Authorization": "Bearer $T"} and got["scope"] == "project"
    for bad, message in [
        (["add", "x"], "either `-- COMMAND"),
        (["add", "a b", "--", "x"], "may use only"),
        (["add", "x", "--env", "NOEQUALS", "--", "x"], "KEY=VALUE"),
        (["get", "nope"], 'no MCP server named "nope"'),
        (["frob"], "unknown mcp command"),
    ]:
        result = _mcp(bad, work, agent)
        assert result.returncode == 1 and message in result.stderr, (bad, result.stderr)
    assert _mcp(["remove", "gh"], work, agent).returncode == 0
    assert _mcp(["remove", "gh"], work, agent).returncode == 1
    assert json.loads((agent / "mcp.json").read_text()) == {"mcpServers": {}}


def test_list_with_only_a_broken_entry_names_the_error_not_an_empty_config(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"bad": {"command": 42}}}))
    listed = _mcp(["list"], work, agent)
    assert listed.returncode == 1
    assert 'MCP server "bad": command' in listed.stderr
    assert "No MCP servers configured" not in listed.stdout
