"""Local models with small context windows, through the real CLI against a scripted server that behaves like a
llama.cpp server with that context size (counted prompts, replies cut at the window, its overflow error).

Invariants: every request the CLI sends leaves room for a useful reply (at least 256 tokens, prompt and reply
inside the window) or the run stops with a `Context full` error and a non-zero exit; a reply that stops for
`length` stays in memory as in the file; compaction runs only above the threshold, frees at least 10%, and is
not attempted again before the context grew.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_lines, run_cli
from test_cli_rpc import RpcProcess

from apex_ai.overflow import MIN_OUTPUT_TOKENS
from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.session import SessionManager

WINDOWS = [2048, 4096, 8192, 16384, 32768]
SUMMARY = "## Goal\nRead notes.txt on every turn.\n\n## Progress\n### Done\n- [x] read notes.txt\n" * 3
NOTES = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(30))  # ~400 tokens


def _setup(tmp_path: Path, server: ScriptedModelServer, window: int) -> tuple[Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    model = {"id": "local-model", "contextWindow": window, "maxTokens": 8192}
    provider = {"baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "k", "models": [model]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return work, agent


def _max_tokens(record: dict[str, Any]) -> int:
    body = record["body"]
    return int(body.get("max_completion_tokens") or body.get("max_tokens"))


def _assert_useful_requests(server: ScriptedModelServer, window: int) -> None:
    for record in server.requests:
        cap = _max_tokens(record)
        assert cap >= MIN_OUTPUT_TOKENS, (record["seq"], cap)
        assert record["prompt_tokens"] + cap <= window, (record["seq"], record["prompt_tokens"], cap)
        assert record["reply_index"] is not None, record["seq"]  # the server never refused a prompt


@pytest.mark.parametrize("window", WINDOWS)
def test_a_prompt_gets_a_useful_output_cap(tmp_path: Path, window: int) -> None:
    with ScriptedModelServer([{"text": "Hello there."}], context_window=window) as server:
        work, agent = _setup(tmp_path, server, window)
        result = run_cli(["--permission-mode", "plan", "-p", "hello"], work, agent)
    assert (result.returncode, result.stdout) == (0, "Hello there.\n"), result.stderr
    assert len(server.requests) == 1
    _assert_useful_requests(server, window)


@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_prompt_that_leaves_no_room_stops_with_context_full(tmp_path: Path, mode: str) -> None:
    window = 2048
    with ScriptedModelServer([{"text": "never sent"}], context_window=window) as server:
        work, agent = _setup(tmp_path, server, window)
        result = run_cli(["--mode", mode, "--permission-mode", "plan", "-p", "x " * 1200], work, agent)
    assert result.returncode == 1
    assert server.requests == []  # nothing that could not answer was sent
    if mode == "json":
        records = json_lines(result.stdout)
        assert records[-1] == {"type": "result", "status": "error"}
        ends = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"]
        assert ends[-1]["message"]["errorMessage"].startswith("Context full: ")
        assert f"of {window} tokens used" in ends[-1]["message"]["errorMessage"]
    else:
        assert result.stdout == ""
        assert f" of {window} tokens used" in result.stderr and "Context full: " in result.stderr


def test_nothing_to_compact_is_reported_once_until_the_context_grows(tmp_path: Path) -> None:
    """A first prompt big enough to cross the threshold alone: nothing can be summarized, and the next turns
    (which hardly grow the context) do not try again."""
    window = 4096
    with ScriptedModelServer([{"text": "Noted.", "repeat": True}], context_window=window) as server:
        work, agent = _setup(tmp_path, server, window)
        prompts = ["y " * 4250, "ok", "fine"]  # ~2100 tokens: with the system prompt just over 3072
        result = run_cli(["--mode", "json", "--permission-mode", "plan", *prompts], work, agent)
    records = json_lines(result.stdout)
    assert records[-1] == {"type": "result", "status": "completed"}, result.stderr
    ends = [r for r in records if r["type"] == "compaction_end"]
    assert [e.get("errorMessage") for e in ends] == ["Auto-compaction failed: Nothing to compact (session too small)"]
    assert len(server.requests) == 3
    _assert_useful_requests(server, window)


def _session_messages(path: str) -> list[dict[str, Any]]:
    manager = SessionManager.open(path)
    return [m.model_dump(mode="json", by_alias=True) for m in manager.build_session_context().messages]


def test_a_reply_cut_for_length_stays_in_memory_as_in_the_file(tmp_path: Path) -> None:
    window = 4096
    # The model's cap is 8192; the reply stops for length well below it (as a server's own limit would).
    scenario = [{"text": "The beginning of a long answer", "stop_reason": "length"}, {"text": "second"}]
    with ScriptedModelServer(scenario, context_window=window) as server:
        work, agent = _setup(tmp_path, server, window)
        rpc = RpcProcess(work, agent)
        try:
            rpc.send({"id": "p1", "type": "prompt", "message": "tell me"})
            rpc.until(lambda r: r["type"] == "agent_settled")
            memory = rpc.response_to({"id": "m1", "type": "get_messages"})["data"]["messages"]
            state = rpc.response_to({"id": "s1", "type": "get_state"})["data"]
        finally:
            code, _ = rpc.close()
    assert code == 0
    stored = _session_messages(state["sessionFile"])
    # The file also records what the model was told (a leading system message); the conversation must agree.
    assert stored[0]["role"] == "system"
    stored = [m for m in stored if m["role"] != "system"]
    assert [(m["role"], m.get("stopReason")) for m in memory] == [("user", None), ("assistant", "length")]
    assert [(m["role"], m.get("stopReason"), m["content"]) for m in memory] == [
        (m["role"], m.get("stopReason"), m["content"]) for m in stored
    ]
    assert len(server.requests) == 1  # not retried, not compacted


def _compactions(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "compaction_end"]


@pytest.mark.parametrize("window", [4096, 8192, 16384, 32768])
def test_a_thirty_turn_session_with_tool_output_runs_to_the_end(tmp_path: Path, window: int) -> None:
    scenario = [
        {"when_last": "<conversation>", "text": SUMMARY, "repeat": True},
        {"when_last": '"role":"tool"', "text": "The notes have thirty lines.", "repeat": True},
        {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "repeat": True},
    ]
    turns = 30
    with ScriptedModelServer(scenario, context_window=window) as server:
        work, agent = _setup(tmp_path, server, window)
        (work / "notes.txt").write_text(NOTES)
        prompts = [f"turn {i}: read notes.txt again" for i in range(turns)]
        result = run_cli(["--mode", "json", "--permission-mode", "plan", *prompts], work, agent, timeout=120)
    records = json_lines(result.stdout)
    assert records[-1] == {"type": "result", "status": "completed"}, result.stderr[-2000:]
    answers = [
        r
        for r in records
        if r["type"] == "message_end"
        and r["message"]["role"] == "assistant"
        and r["message"]["content"][:1] == [{"type": "text", "text": "The notes have thirty lines."}]
    ]
    assert len(answers) == turns
    _assert_useful_requests(server, window)

    first_prompt = server.requests[0]["prompt_tokens"]  # system prompt, tools and one short user message
    threshold = window - min(16384, window // 4)
    compactions = _compactions(records)
    for end in compactions:
        assert "errorMessage" not in end and end["aborted"] is False, end
        result_data = end["result"]
        before, after = result_data["tokensBefore"], result_data["estimatedTokensAfter"] + first_prompt
        assert before > threshold, (before, threshold)  # only when needed
        assert before - after >= 0.10 * before, (before, after)  # and it helps
    # Between two compactions the conversation went on: no compaction right after another one.
    kinds = [r["type"] for r in records if r["type"] in ("compaction_start", "message_end")]
    starts = [i for i, kind in enumerate(kinds) if kind == "compaction_start"]
    assert all(b - a > 1 for a, b in zip(starts, starts[1:], strict=False))
    if window <= 8192:
        assert compactions  # this much tool output cannot fit without them
