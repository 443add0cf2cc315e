"""The real `apex-code` in JSON mode records what the model is told (docs/sessions.md, "System messages"): a new
session announces its leading system message once, before the first user message, with the prompt and tools its
first request carries; continuing it adds none until the prompt changes, then exactly one `replace` delta."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import (
    assert_leading_system,
    is_system_record,
    json_lines,
    request_prompt_and_tools,
    run_cli,
    write_models,
)

from apex_ai.testing.scripted_server import ScriptedModelServer

ANSWER = {"text": "Done.", "usage": {"input": 20, "output": 2}, "repeat": True}
JSON_ARGS = ["--mode", "json", "--permission-mode", "plan"]


def _session_messages(agent: Path) -> list[dict[str, Any]]:
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    return [line["message"] for line in lines if line["type"] == "message"]


def test_json_mode_announces_the_system_message_once_and_continuing_adds_one_delta_per_change(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    with ScriptedModelServer([ANSWER]) as server:
        write_models(agent, server, api="anthropic-messages")
        new = run_cli([*JSON_ARGS, "-p", "hello"], work, agent)
        same = run_cli([*JSON_ARGS, "-c", "-p", "again"], work, agent)
        (work / "AGENTS.md").write_text("Reply in haiku.", encoding="utf-8")
        changed = run_cli([*JSON_ARGS, "-c", "-p", "once more"], work, agent)
        bodies = [request["body"] for request in server.requests]
    for proc in (new, same, changed):
        assert proc.returncode == 0, proc.stderr

    # The new session: one system message, opening the first turn, declaring what the first request carried.
    prompt, tools = request_prompt_and_tools(bodies[0])
    leading = assert_leading_system(json_lines(new.stdout), tools)
    assert leading["content"] == prompt
    # Nothing changed: no system message at all.
    assert not any(is_system_record(record) for record in json_lines(same.stdout))
    # AGENTS.md changed: one `replace` delta with the full new prompt and the tools, before the user message.
    records = json_lines(changed.stdout)
    systems = [r for r in records if is_system_record(r)]
    assert [r["type"] for r in systems] == ["message_start", "message_end"]
    delta = systems[0]["message"]
    prompt, tools = request_prompt_and_tools(bodies[2])
    assert delta["replace"] is True and delta["content"] == prompt and "Reply in haiku." in prompt
    assert [tool["name"] for tool in delta["toolsAdded"]] == tools
    kinds = [(r["type"], (r.get("message") or {}).get("role")) for r in records]
    assert kinds.index(("message_end", "system")) < kinds.index(("message_start", "user"))

    # The file holds the same record.
    messages = _session_messages(agent)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"] + [
        "system",
        "user",
        "assistant",
    ]
    assert messages[0]["content"] == leading["content"] and messages[5] == delta
