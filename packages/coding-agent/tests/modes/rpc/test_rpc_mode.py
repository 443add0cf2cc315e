"""RPC mode end to end through pipes (spec modes.md §7, acceptance checks 10-16)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rpc_harness import RpcClient, RpcHarness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_coding_agent.modes.rpc.rpc_mode import run_rpc_mode


def is_type(kind: str) -> Any:
    return lambda record: record.get("type") == kind


async def test_get_state_then_eof_exits_zero(rpc: RpcHarness) -> None:
    client = await rpc.client()
    response = await client.request({"id": "s", "type": "get_state"})
    assert response["success"] is True
    data = response["data"]
    assert list(data) == [
        "model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode", "sessionId",
        "autoCompactionEnabled", "messageCount", "pendingMessageCount",
    ]  # fmt: skip
    assert data["model"]["id"] == "faux-1"
    assert data["isStreaming"] is False
    assert await client.close() == 0


async def test_prompt_response_precedes_agent_start_and_second_prompt_fails(rpc: RpcHarness) -> None:
    gate = asyncio.Event()

    async def slow_reply(*_: Any) -> Any:
        await gate.wait()
        return faux_assistant_message("done")

    rpc.script(slow_reply)
    client = await rpc.client()
    client.send({"id": "r1", "type": "prompt", "message": "hi"})
    first = await client.recv()
    assert first == {"id": "r1", "type": "response", "command": "prompt", "success": True}
    assert (await client.recv())["type"] == "agent_start"
    # The run is waiting on the model: the next line is read and answered meanwhile.
    second = await client.request({"id": "r2", "type": "prompt", "message": "again"})
    assert second["success"] is False
    assert "streamingBehavior" in second["error"]
    queued = await client.request({"id": "r3", "type": "prompt", "message": "later", "streamingBehavior": "followUp"})
    assert queued["success"] is True
    gate.set()
    rpc.faux.append_responses([faux_assistant_message("second")])
    await client.until(is_type("agent_settled"))
    ends = [r for r in client.received if r["type"] == "message_end" and r["message"]["role"] == "user"]
    assert [e["message"]["content"][0]["text"] for e in ends] == ["hi", "later"]
    assert await client.close() == 0


async def test_message_update_is_slim(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("hello there"))
    client = await rpc.client()
    client.send({"type": "prompt", "message": "hi"})
    records = await client.until(is_type("agent_settled"))
    updates = [r for r in records if r["type"] == "message_update"]
    assert updates
    for update in updates:
        assert set(update) == {"type", "assistantMessageEvent"}
        assert "partial" not in update["assistantMessageEvent"]
    assert await client.close() == 0


async def test_abort_while_streaming(rpc: RpcHarness) -> None:
    started = asyncio.Event()

    async def never(_context: Any, options: Any, *_: Any) -> Any:
        started.set()
        await options.signal.wait()  # a model that only ends when the run is aborted
        return faux_assistant_message("unreachable")

    rpc.script(never)
    client = await rpc.client()
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.response("p")
    await started.wait()
    response = await client.request({"id": "a", "type": "abort"})
    assert response == {"id": "a", "type": "response", "command": "abort", "success": True}
    state = await client.request({"id": "s", "type": "get_state"})
    assert state["data"]["isStreaming"] is False
    assert await client.close() == 0


async def test_steer_while_streaming(rpc: RpcHarness) -> None:
    gate = asyncio.Event()

    async def first(*_: Any) -> Any:
        await gate.wait()
        return faux_assistant_message("one")

    rpc.script(first, faux_assistant_message("two"))
    client = await rpc.client()
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.response("p")
    steer = await client.request({"id": "st", "type": "steer", "message": "also this"})
    assert steer["success"] is True
    queue = [r for r in client.received if r["type"] == "queue_update"]
    assert queue[-1]["steering"] == ["also this"]
    gate.set()
    records = await client.until(is_type("agent_settled"))
    users = [r["message"] for r in records if r["type"] == "message_start" and r["message"]["role"] == "user"]
    assert users[-1]["content"][0]["text"] == "also this"
    assert await client.close() == 0


async def test_line_with_u2028_and_crlf_is_one_command(rpc: RpcHarness) -> None:
    client = await rpc.client()
    client.send_raw('{"id":"a\u2028b","type":"set_session_name","name":"x\u2029y"}\r\n'.encode())
    response, before = await client.response("a\u2028b")
    assert response["success"] is True
    assert before == [{"type": "session_info_changed", "name": "x\u2029y"}]
    assert await client.close() == 0


async def test_session_name_event_precedes_response_and_blank_fails(rpc: RpcHarness) -> None:
    client = await rpc.client()
    client.send({"id": "n", "type": "set_session_name", "name": "  golden  "})
    assert await client.recv() == {"type": "session_info_changed", "name": "golden"}
    assert await client.recv() == {"id": "n", "type": "response", "command": "set_session_name", "success": True}
    blank = await client.request({"id": "b", "type": "set_session_name", "name": "   "})
    assert blank["error"] == "Session name cannot be empty"
    state = await client.request({"id": "s", "type": "get_state"})
    assert state["data"]["sessionName"] == "golden"
    assert await client.close() == 0


async def test_garbage_unknown_and_non_object_lines(rpc: RpcHarness) -> None:
    client = await rpc.client()
    client.send_raw(b"this is not json\n")
    assert (await client.recv())["command"] == "parse"
    client.send({"id": "x", "type": "nope"})
    assert await client.recv() == {
        "type": "response",
        "command": "nope",
        "success": False,
        "error": "Unknown command: nope",
    }
    client.send_raw(b"[1]\n")
    assert (await client.recv())["command"] == "parse"
    assert (await client.request({"id": "s", "type": "get_state"}))["success"] is True
    assert await client.close() == 0


async def test_get_entries_since_and_unknown(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("a"), faux_assistant_message("b"))
    client = await rpc.client()
    for text in ("one", "two"):
        client.send({"type": "prompt", "message": text})
        await client.until(is_type("agent_settled"))
    everything = await client.request({"id": "e", "type": "get_entries"})
    entries = everything["data"]["entries"]
    assert len(entries) >= 4
    assert everything["data"]["leafId"] == entries[-1]["id"]
    since = await client.request({"id": "e2", "type": "get_entries", "since": entries[1]["id"]})
    assert since["data"]["entries"] == entries[2:]
    assert since["data"]["leafId"] == entries[-1]["id"]
    missing = await client.request({"id": "e3", "type": "get_entries", "since": "nope"})
    assert missing["success"] is False
    assert missing["error"] == "Entry not found: nope"
    assert await client.close() == 0


async def test_bash_streams_updates_with_the_request_id(rpc: RpcHarness) -> None:
    client = await rpc.client()
    client.send({"id": "b", "type": "bash", "command": "printf 'a\\nb\\n'"})
    response, before = await client.response("b")
    assert response["success"] is True
    assert response["data"]["output"] == "a\nb\n"
    assert response["data"]["exitCode"] == 0
    assert response["data"]["truncated"] is False
    assert response["data"]["cancelled"] is False
    updates = [r for r in before if r["type"] == "bash_execution_update"]
    assert updates and all(u["id"] == "b" for u in updates)
    assert "".join(u["delta"] for u in updates) == "a\nb\n"
    assert await client.close() == 0


async def test_abort_bash_while_it_runs(rpc: RpcHarness) -> None:
    client = await rpc.client()
    client.send({"id": "b", "type": "bash", "command": "echo started; sleep 30"})
    await client.until(is_type("bash_execution_update"))
    assert (await client.request({"id": "ab", "type": "abort_bash"}))["success"] is True
    response, _ = await client.response("b")
    assert response["data"]["cancelled"] is True
    assert "exitCode" not in response["data"]
    assert await client.close() == 0


async def test_model_and_thinking_commands(rpc: RpcHarness) -> None:
    client = await rpc.client()
    models = await client.request({"id": "m", "type": "get_available_models"})
    assert [m["id"] for m in models["data"]["models"]] == ["faux-1", "faux-think"]
    missing = await client.request({"id": "x", "type": "set_model", "provider": "faux", "modelId": "nope"})
    assert missing["error"] == "Model not found: faux/nope"
    chosen = await client.request({"id": "sm", "type": "set_model", "provider": "faux", "modelId": "faux-think"})
    assert chosen["data"]["id"] == "faux-think"
    levels = await client.request({"id": "l", "type": "get_available_thinking_levels"})
    assert "off" in levels["data"]["levels"] and "high" in levels["data"]["levels"]
    await client.request({"id": "t", "type": "set_thinking_level", "level": "high"})
    assert any(r == {"type": "thinking_level_changed", "level": "high"} for r in client.received)
    cycled = await client.request({"id": "c", "type": "cycle_thinking_level"})
    assert set(cycled["data"]) == {"level"}
    cycle_model = await client.request({"id": "cm", "type": "cycle_model"})
    assert cycle_model["data"]["model"]["id"] == "faux-1"
    assert cycle_model["data"]["isScoped"] is False
    none_left = await client.request({"id": "ct", "type": "cycle_thinking_level"})
    assert none_left == {
        "id": "ct",
        "type": "response",
        "command": "cycle_thinking_level",
        "success": True,
        "data": None,
    }
    await client.request({"id": "q", "type": "set_steering_mode", "mode": "all"})
    await client.request({"id": "q2", "type": "set_follow_up_mode", "mode": "all"})
    state = await client.request({"id": "s", "type": "get_state"})
    assert (state["data"]["steeringMode"], state["data"]["followUpMode"]) == ("all", "all")
    assert await client.close() == 0


async def test_settings_toggles(rpc: RpcHarness) -> None:
    client = await rpc.client()
    await client.request({"id": "a", "type": "set_auto_compaction", "enabled": False})
    await client.request({"id": "r", "type": "set_auto_retry", "enabled": False})
    assert rpc.settings.get("retry.enabled") is False
    state = await client.request({"id": "s", "type": "get_state"})
    assert state["data"]["autoCompactionEnabled"] is False
    assert (await client.request({"id": "ar", "type": "abort_retry"}))["success"] is True
    wrong = await client.request({"id": "w", "type": "set_auto_retry", "enabled": "no"})
    assert wrong["success"] is False and "enabled" in wrong["error"]
    assert await client.close() == 0


async def test_fork_clone_new_session_and_switch(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("a"), faux_assistant_message("b"))
    client = await rpc.client(persisted=True)
    for text in ("first", "second"):
        client.send({"type": "prompt", "message": text})
        await client.until(is_type("agent_settled"))
    forks = await client.request({"id": "fm", "type": "get_fork_messages"})
    messages = forks["data"]["messages"]
    assert [m["text"] for m in messages] == ["first", "second"]
    before = await client.request({"id": "s0", "type": "get_state"})
    fork = await client.request({"id": "f", "type": "fork", "entryId": messages[1]["entryId"]})
    assert fork["data"] == {"text": "second", "cancelled": False}
    after = await client.request({"id": "s1", "type": "get_state"})
    assert after["data"]["sessionId"] != before["data"]["sessionId"]
    assert after["data"]["messageCount"] == 2
    clone = await client.request({"id": "c", "type": "clone"})
    assert clone["data"] == {"cancelled": False}
    cloned = await client.request({"id": "s2", "type": "get_state"})
    assert cloned["data"]["messageCount"] == 2
    fresh = await client.request({"id": "n", "type": "new_session"})
    assert fresh["data"] == {"cancelled": False}
    empty = await client.request({"id": "s3", "type": "get_state"})
    assert empty["data"]["messageCount"] == 0
    # Events of the replacement session still reach the client.
    await client.request({"id": "nm", "type": "set_session_name", "name": "renamed"})
    assert {"type": "session_info_changed", "name": "renamed"} in client.received
    switched = await client.request(
        {"id": "sw", "type": "switch_session", "sessionPath": before["data"]["sessionFile"]}
    )
    assert switched["data"] == {"cancelled": False}
    back = await client.request({"id": "s4", "type": "get_state"})
    assert back["data"]["sessionId"] == before["data"]["sessionId"]
    bad = await client.request({"id": "bad", "type": "fork", "entryId": "nope"})
    assert bad["success"] is False
    assert await client.close() == 0


async def test_stats_last_text_messages_and_export(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message([faux_tool_call("bash", {"command": "echo hello"})], stop_reason="toolUse"))
    rpc.faux.append_responses([faux_assistant_message("The command printed: hello")])
    client = await rpc.client()
    client.send({"type": "prompt", "message": "Run echo hello"})
    records = await client.until(is_type("agent_settled"))
    assert [r["type"] for r in records if r["type"].startswith("tool_execution")][0] == "tool_execution_start"
    text = await client.request({"id": "t", "type": "get_last_assistant_text"})
    assert text["data"] == {"text": "The command printed: hello"}
    messages = await client.request({"id": "m", "type": "get_messages"})
    assert [m["role"] for m in messages["data"]["messages"]] == ["user", "assistant", "toolResult", "assistant"]
    stats = await client.request({"id": "st", "type": "get_session_stats"})
    assert stats["data"]["toolCalls"] == 1 and stats["data"]["userMessages"] == 1
    export = await client.request({"id": "x", "type": "export_html", "outputPath": "out.html"})
    assert export["success"] is True
    assert export["data"]["path"].endswith("out.html")
    assert "Run echo hello" in Path(export["data"]["path"]).read_text(encoding="utf-8")
    compact = await client.request({"id": "c", "type": "compact"})
    assert compact["success"] is False and compact["error"]
    assert await client.close() == 0


async def test_get_commands_lists_templates_then_skills(rpc: RpcHarness) -> None:
    prompts = rpc.agent_dir / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review code\n---\nReview $1\n")
    skill = rpc.agent_dir / "skills" / "Deploy Thing"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy-thing\ndescription: Deploys things\n---\nSteps\n")
    client = await rpc.client(resource_loader=rpc.resource_loader())
    response = await client.request({"id": "g", "type": "get_commands"})
    commands = response["data"]["commands"]
    assert [(c["name"], c["source"]) for c in commands] == [("review", "prompt"), ("skill:deploy-thing", "skill")]
    assert commands[0]["description"] == "Review code"
    assert set(commands[0]["sourceInfo"]) >= {"path", "source", "scope", "origin"}
    assert await client.close() == 0


async def test_eof_mid_run_aborts_and_exits_zero(rpc: RpcHarness) -> None:
    async def never(_context: Any, options: Any, *_: Any) -> Any:
        await options.signal.wait()  # a model that only ends when the run is aborted
        return faux_assistant_message("unreachable")

    rpc.script(never)
    client = await rpc.client()
    client.send({"id": "p", "type": "prompt", "message": "hi"})
    await client.response("p")
    client.send_raw(b'{"id":"last","type":"get_state"}')  # unterminated final line
    assert await client.close() == 0
    while True:
        try:
            record = await client.recv(timeout=1.0)
        except EOFError:
            break
        if record.get("id") == "last":
            assert record["success"] is True
            break
    else:  # pragma: no cover - the loop exits by break
        raise AssertionError
    assert json.dumps(client.received)  # everything received was valid JSON


async def test_regular_files_as_stdin_and_stdout(rpc: RpcHarness, tmp_path: Path) -> None:
    """`apex-code --mode rpc < commands.jsonl > out.jsonl`: a file is not pollable, a thread reads it."""
    commands = tmp_path / "in.jsonl"
    commands.write_bytes(b'{"id":"1","type":"get_state"}\r\n\n{"id":"2","type":"set_session_name","name":"f"}')
    output = tmp_path / "out.jsonl"
    with commands.open("rb") as stdin, output.open("wb") as stdout:
        code = await run_rpc_mode(await rpc.runtime(), stdin=stdin, stdout=stdout, handle_signals=False)
    assert code == 0
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [(r.get("id"), r["type"], r.get("command")) for r in records] == [
        ("1", "response", "get_state"),
        (None, "response", "parse"),
        (None, "session_info_changed", None),
        ("2", "response", "set_session_name"),
    ]


async def test_extension_error_record(rpc: RpcHarness) -> None:
    client = RpcClient()
    server = await client.start_server(await rpc.runtime())
    server.extension_error("/ext/a.py", "tool_call", "boom")
    assert await client.recv() == {
        "type": "extension_error",
        "extensionPath": "/ext/a.py",
        "event": "tool_call",
        "error": "boom",
    }
    assert await client.close() == 0


async def test_responses_keep_request_order_within_one_read(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("ok"))
    client = await rpc.client()
    client.send_raw(b'{"id":"p","type":"prompt","message":"hi"}\nnot json\n{"id":"s","type":"get_state"}\n')
    records = await client.until(lambda r: r.get("id") == "s")
    responses = [(r.get("id"), r["command"]) for r in records if r["type"] == "response"]
    assert responses == [("p", "prompt"), (None, "parse"), ("s", "get_state")]
    assert records[0]["command"] == "prompt"  # nothing, not even agent_start, before the prompt's response
    await client.until(is_type("agent_settled"))
    assert await client.close() == 0
