"""Running the real `apex-code` as a subprocess against a scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from apex_ai.testing.scripted_server import ScriptedModelServer

CLI = [sys.executable, "-m", "apex_coding_agent.cli"]


def write_models(agent_dir: Path, server: ScriptedModelServer, api: str = "openai-completions") -> None:
    base = server.anthropic_base_url if api == "anthropic-messages" else server.openai_base_url
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {"baseUrl": base, "api": api, "apiKey": "test-key", "models": [{"id": "fake-model"}]}
                }
            }
        )
    )


def env_for(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("APEX_CODE_")}
    env["APEX_CODE_CODING_AGENT_DIR"] = str(agent_dir)
    return env


def run_cli(
    args: list[str], cwd: Path, agent_dir: Path, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=env_for(agent_dir),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def is_system_record(record: dict[str, Any]) -> bool:
    """A JSON event (`message_start`/`message_end`) or session entry carrying a system message."""
    message = record.get("message")
    return isinstance(message, dict) and message.get("role") == "system"


def without_system(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` without system-message events or entries, for comparisons with pi 0.73.1 captures: pi predates
    the seed's `SystemMessage`, which the coding agent records in the session (and emits) as an addition. An
    entry that followed a dropped one takes over its parent, so the chain reads as pi's. Callers check where the
    system message was with `assert_leading_system`."""
    out: list[dict[str, Any]] = []
    relink: dict[str, Any] = {}
    for record in records:
        if is_system_record(record):
            if "id" in record:
                relink[record["id"]] = relink.get(record["parentId"], record["parentId"])
            continue
        parent = record.get("parentId")
        if isinstance(parent, str) and parent in relink:
            record = {**record, "parentId": relink[parent]}
        out.append(record)
    return out


def assert_leading_system(records: list[dict[str, Any]], tool_names: list[str] | None = None) -> dict[str, Any]:
    """A new session's first message is its system message, before the first user message: as one session entry,
    or as a `message_start`/`message_end` pair right after the first `turn_start`. Returns that message (its tools
    checked against `tool_names` when given)."""
    kinds = [(r["type"], r["message"]["role"]) for r in records if isinstance(r.get("message"), dict)]
    if kinds and kinds[0][0] == "message":  # session entries
        assert kinds[:2] == [("message", "system"), ("message", "user")], kinds
    else:
        types = [r["type"] for r in records]
        first = types.index("turn_start") + 1
        assert [(r["type"], r.get("message", {}).get("role")) for r in records[first : first + 3]] == [
            ("message_start", "system"),
            ("message_end", "system"),
            ("message_start", "user"),
        ]
        assert sum(1 for r in records if is_system_record(r)) == 2, "one system message, announced once"
    system = next(r["message"] for r in records if is_system_record(r))
    assert isinstance(system["content"], str) and system["content"]
    if tool_names is not None:
        assert [tool["name"] for tool in system.get("toolsAdded") or []] == tool_names
    return system


def request_prompt_and_tools(body: dict[str, Any]) -> tuple[str, list[str]]:
    """The system prompt text and tool names of a recorded request body (Anthropic, Chat Completions or
    Responses)."""
    if "system" in body:
        prompt = "\n\n".join(block["text"] for block in body["system"])
    else:
        first = (body.get("messages") or body.get("input") or [{}])[0]
        prompt = first["content"] if first.get("role") in ("system", "developer") else ""
    names = [tool.get("function", tool)["name"] for tool in body.get("tools", [])]
    return prompt, names


def run_pipeline(pipeline: str, cwd: Path, agent_dir: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `pipeline` in bash with `apex-code` on PATH (the console script of this interpreter's environment).

    The script ends by echoing `PIPESTATUS`, so the last stdout line is `exit=<apex-code's exit code>`.
    """
    env = env_for(agent_dir)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(
        ["bash", "-c", f'{pipeline}; echo "exit=${{PIPESTATUS[0]}}"'],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
