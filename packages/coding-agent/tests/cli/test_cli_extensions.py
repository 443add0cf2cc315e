"""The real `apex-code` loading extensions (resources.md §5, modes.md §1/§4/§7, settings-and-trust.md §6)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_helpers import CLI, env_for, json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

HELLO = Path(__file__).resolve().parents[4] / "examples" / "extensions" / "hello_tool.py"
GREET_ADA = [
    {"tool_calls": [{"name": "hello", "arguments": {"name": "Ada"}}], "usage": {"input": 20, "output": 5}},
    {"text": "Greeted.", "usage": {"input": 30, "output": 2}},
]
RECORDER = """
import json, os

def extension(pi):
    log = os.environ.get("EXT_LOG", os.devnull)

    def write(record):
        with open(log, "a") as f:
            f.write(json.dumps(record) + "\\n")

    pi.register_flag("greeting", type="string", description="How to greet")

    @pi.on("session_start")
    def start(event, ctx):
        write({"event": "session_start", "reason": event.reason, "mode": ctx.mode, "flag": pi.get_flag("greeting")})

    @pi.on("session_shutdown")
    def stop(event, ctx):
        write({"event": "session_shutdown", "reason": event.reason})

    @pi.on("agent_start")
    def boom(event, ctx):
        raise RuntimeError("agent_start handler broke")
"""


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    return work, agent


def _tool_result_text(body: dict[str, Any]) -> str:
    """The text the model got back for its tool call (openai-completions request body)."""
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    content = tool_messages[-1]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def test_print_mode_runs_an_extension_tool_even_with_no_extensions(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(GREET_ADA) as server:
        write_models(agent, server)
        proc = run_cli(
            ["-ne", "-e", str(HELLO), "--permission-mode", "bypassPermissions", "-p", "greet Ada"], work, agent
        )
        first, second = server.requests[0]["body"], server.requests[1]["body"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Greeted.\n"
    assert "hello" in [tool["function"]["name"] for tool in first["tools"]]
    assert "- hello: Greet someone by name" in first["messages"][0]["content"]
    assert _tool_result_text(second) == "Hello, Ada!"


def test_json_mode_shows_the_extension_tool_result(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    with ScriptedModelServer(GREET_ADA) as server:
        write_models(agent, server)
        proc = run_cli(
            ["--mode", "json", "-e", str(HELLO), "--permission-mode", "bypassPermissions", "hi"], work, agent
        )
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    end = next(line for line in lines if line["type"] == "tool_execution_end")
    assert end["toolName"] == "hello" and end["result"]["content"][0]["text"] == "Hello, Ada!"
    assert end["result"]["details"] == {"greeted": "Ada"}
    assert lines[-1] == {"type": "result", "status": "completed"}


def test_blocking_tool_call_handler_turns_the_call_into_an_error(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    robot = [{"tool_calls": [{"name": "hello", "arguments": {"name": "Robot"}}]}, {"text": "Refused."}]
    with ScriptedModelServer(robot) as server:
        write_models(agent, server)
        proc = run_cli(["-e", str(HELLO), "--permission-mode", "bypassPermissions", "-p", "greet"], work, agent)
        second = server.requests[1]["body"]
    assert proc.returncode == 0, proc.stderr
    assert "Robots are not greeted" in _tool_result_text(second)


def test_extension_that_fails_to_import_stops_startup_with_the_hint(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    broken = work / "broken.py"
    broken.write_text("raise ValueError('cannot start')\n")
    proc = run_cli(["-e", str(broken), "--permission-mode", "plan", "-p", "hi"], work, agent)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f'Failed to load extension "{broken}": ValueError: cannot start')
    assert lines[1] == 'Start without extensions using "apex-code -ne".'
    assert proc.stdout == ""


def test_untrusted_project_extensions_are_not_loaded(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    marker = tmp_path / "imported"
    project_ext = work / ".apex-code" / "extensions"
    project_ext.mkdir(parents=True)
    (project_ext / "probe.py").write_text(f"open({str(marker)!r}, 'w').close()\n\ndef extension(pi):\n    pass\n")
    with ScriptedModelServer([{"text": "one"}, {"text": "two"}]) as server:
        write_models(agent, server)
        untrusted = run_cli(["--permission-mode", "plan", "-p", "hi"], work, agent)
        assert untrusted.returncode == 0, untrusted.stderr
        assert not marker.exists()
        approved = run_cli(["--approve", "--permission-mode", "plan", "-p", "hi"], work, agent)
    assert approved.returncode == 0, approved.stderr
    assert marker.exists()


def test_flags_session_events_and_handler_errors_in_print_mode(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    recorder = work / "recorder.py"
    recorder.write_text(RECORDER)
    log = tmp_path / "events.jsonl"
    env_extra = {"EXT_LOG": str(log)}
    with ScriptedModelServer([{"text": "ok"}]) as server:
        write_models(agent, server)
        proc = subprocess.run(
            [*CLI, "-e", str(recorder), "--greeting", "hey", "--permission-mode", "plan", "-p", "hi"],
            cwd=work,
            env={**env_for(agent), **env_extra},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    assert f"Extension error ({recorder}): agent_start handler broke" in proc.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records == [
        {"event": "session_start", "reason": "startup", "mode": "print", "flag": "hey"},
        {"event": "session_shutdown", "reason": "quit"},
    ]


KEYED_PROVIDER = """
import os

def extension(pi):
    pi.register_provider("extprov", {
        "baseUrl": os.environ["EXT_BASE"],
        "api": "openai-completions",
        "apiKey": "$EXT_KEY",
        "headers": {"X-Team": "$EXT_TEAM", "X-Unset": "$EXT_UNSET_VAR", "X-Plain": "as-is"},
        "authHeader": True,
        "models": [{"id": "m1"}],
    })
"""


def test_a_provider_an_extension_registers_sends_its_key_and_headers_resolved(tmp_path: Path) -> None:
    """The config's `apiKey` and `headers` are value references like models.json's: `$EXT_KEY` and `$EXT_TEAM`
    arrive as the variables' values, a header naming an unset variable is left out."""
    work, agent = _dirs(tmp_path)
    extension = work / "keyed.py"
    extension.write_text(KEYED_PROVIDER)
    with ScriptedModelServer([{"text": "ok"}], api_key="ext-secret") as server:
        proc = subprocess.run(
            [*CLI, "-e", str(extension), "--model", "extprov/m1", "--permission-mode", "plan", "-p", "hi"],
            cwd=work,
            env={**env_for(agent), "EXT_BASE": server.openai_base_url, "EXT_KEY": "ext-secret", "EXT_TEAM": "blue"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    # The server answers 401 to any other key, so one request that got its reply carried exactly this one.
    assert [(r["auth"], r["reply_index"]) for r in requests] == [("bearer", 0)]
    headers = requests[0]["headers"]
    assert {name: headers[name] for name in ("x-team", "x-plain") if name in headers} == {
        "x-team": "blue",
        "x-plain": "as-is",
    }
    assert "x-unset" not in headers
    assert not any("$" in value for value in headers.values())


def test_help_lists_extension_flags(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    recorder = work / "recorder.py"
    recorder.write_text(RECORDER)
    proc = run_cli(["--help", "-e", str(recorder)], work, agent)
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout
    flag_line = next(line for line in proc.stdout.splitlines() if "--greeting" in line)
    assert "How to greet" in flag_line


class _Rpc:
    """An `apex-code --mode rpc` process: JSON lines in, records out."""

    def __init__(self, args: list[str], cwd: Path, agent: Path, env_extra: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*CLI, "--mode", "rpc", *args],
            cwd=cwd,
            env={**env_for(agent), **(env_extra or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.seen: list[dict[str, Any]] = []

    def send(self, record: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(record) + "\n")
        self.proc.stdin.flush()

    def until(self, predicate: Any) -> dict[str, Any]:  # Any: a callable over one record
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"rpc ended early; stderr: {self.proc.stderr.read() if self.proc.stderr else ''}"
            record: dict[str, Any] = json.loads(line)
            self.seen.append(record)
            if predicate(record):
                return record

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code


def test_rpc_lists_runs_and_notifies_through_extensions(tmp_path: Path) -> None:
    work, agent = _dirs(tmp_path)
    recorder = work / "recorder.py"
    recorder.write_text(RECORDER)
    log = tmp_path / "events.jsonl"
    with ScriptedModelServer(GREET_ADA) as server:
        write_models(agent, server)
        rpc = _Rpc(
            ["-e", str(HELLO), "-e", str(recorder), "--permission-mode", "bypassPermissions"],
            work,
            agent,
            {"EXT_LOG": str(log)},
        )
        try:
            rpc.send({"id": "c", "type": "get_commands"})
            commands = rpc.until(lambda r: r.get("id") == "c")["data"]["commands"]
            rpc.send({"id": "h", "type": "prompt", "message": "/hello Bob"})
            notify = rpc.until(lambda r: r["type"] == "extension_ui_request")
            answered = rpc.until(lambda r: r.get("id") == "h")
            rpc.send({"id": "p", "type": "prompt", "message": "greet Ada"})
            rpc.until(lambda r: r["type"] == "agent_settled")
        finally:
            code = rpc.close()
    assert code == 0
    assert commands[0]["name"] == "hello" and commands[0]["source"] == "extension"
    assert commands[0]["description"] == "Say hello in the UI"
    assert notify["method"] == "notify" and notify["message"] == "Hello, Bob!" and notify["notifyType"] == "info"
    assert answered["success"] is True
    errors = [r for r in rpc.seen if r["type"] == "extension_error"]
    assert errors == [
        {
            "type": "extension_error",
            "extensionPath": str(recorder),
            "event": "agent_start",
            "error": "agent_start handler broke",
        }
    ]
    end = next(r for r in rpc.seen if r["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "Hello, Ada!"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["event"] for r in records] == ["session_start", "session_shutdown"]
    assert records[0]["mode"] == "rpc"
