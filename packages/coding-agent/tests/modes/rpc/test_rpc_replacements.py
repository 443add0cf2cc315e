"""RPC commands of modes.md §7 whose edge cases no other test drives: `clone` without a current entry, `fork` of
the first user message, `new_session{parentSession}`, `export_html` without a path, `abort_retry` cancelling a
scheduled retry and `cycle_thinking_level` changing the state."""

from __future__ import annotations

from pathlib import Path

from rpc_harness import RpcClient, RpcHarness

from apex_ai.providers.faux import faux_assistant_message

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


def is_type(kind: str) -> object:
    return lambda record: record.get("type") == kind


async def test_clone_without_a_current_entry_fails_with_the_reference_text(rpc: RpcHarness) -> None:
    runtime = await rpc.runtime()
    runtime.session.session_manager.reset_leaf()
    client = RpcClient()
    await client.start(runtime)
    clone = await client.request({"id": "c", "type": "clone"})
    assert clone == {
        "id": "c",
        "type": "response",
        "command": "clone",
        "success": False,
        "error": "Cannot clone session: no current entry selected",
    }
    assert (await client.request({"id": "s", "type": "get_state"}))["success"] is True
    assert await client.close() == 0


async def test_fork_of_the_first_user_message_starts_an_empty_child(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("a"))
    runtime = await rpc.runtime(persisted=True)
    client = RpcClient()
    await client.start(runtime)
    client.send({"type": "prompt", "message": "only question"})
    await client.until(is_type("agent_settled"))
    before = (await client.request({"id": "s0", "type": "get_state"}))["data"]
    first = (await client.request({"id": "fm", "type": "get_fork_messages"}))["data"]["messages"][0]

    fork = await client.request({"id": "f", "type": "fork", "entryId": first["entryId"]})

    assert fork["data"] == {"text": "only question", "cancelled": False}
    after = (await client.request({"id": "s1", "type": "get_state"}))["data"]
    assert after["sessionId"] != before["sessionId"] and after["messageCount"] == 0
    assert runtime.session.session_manager.get_header().parent_session == before["sessionFile"]
    assert await client.close() == 0


async def test_new_session_records_the_parent_session(rpc: RpcHarness) -> None:
    runtime = await rpc.runtime()
    client = RpcClient()
    await client.start(runtime)
    fresh = await client.request({"id": "n", "type": "new_session", "parentSession": "/tmp/parent.jsonl"})
    assert fresh["data"] == {"cancelled": False}
    assert runtime.session.session_manager.get_header().parent_session == "/tmp/parent.jsonl"
    assert await client.close() == 0


async def test_export_html_without_a_path_writes_next_to_the_cwd(rpc: RpcHarness) -> None:
    rpc.script(faux_assistant_message("exported answer"))
    client = await rpc.client()
    client.send({"type": "prompt", "message": "export me"})
    await client.until(is_type("agent_settled"))
    export = await client.request({"id": "x", "type": "export_html"})
    path = Path(export["data"]["path"])
    assert path.is_absolute() and path.suffix == ".html"
    html = path.read_text(encoding="utf-8")
    assert "export me" in html and "exported answer" in html
    assert await client.close() == 0


async def test_abort_retry_cancels_the_scheduled_retry(rpc: RpcHarness) -> None:
    rpc.settings.set("retry.baseDelayMs", 60_000)  # the retry would wait a minute: only the abort ends it
    rpc.script(faux_assistant_message([], stop_reason="error", error_message=OVERLOADED))
    rpc.faux.append_responses([faux_assistant_message("never sent")])
    client = await rpc.client()
    client.send({"type": "prompt", "message": "hi"})
    start = (await client.until(is_type("auto_retry_start")))[-1]
    assert start["attempt"] == 1 and start["delayMs"] == 60_000

    aborted = await client.request({"id": "ar", "type": "abort_retry"})

    assert aborted == {"id": "ar", "type": "response", "command": "abort_retry", "success": True}
    records = await client.until(is_type("agent_settled"))
    end = next(r for r in client.received if r["type"] == "auto_retry_end")
    assert end == {"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"}
    assert not any(r["type"] == "agent_start" for r in records)  # no second attempt
    assert rpc.faux.pending_count == 1
    assert await client.close() == 0


async def test_cycle_thinking_level_moves_the_state_and_emits_the_change(rpc: RpcHarness) -> None:
    client = RpcClient()
    await client.start(await rpc.runtime(model_id="faux-think"))
    levels = (await client.request({"id": "l", "type": "get_available_thinking_levels"}))["data"]["levels"]
    state = (await client.request({"id": "s0", "type": "get_state"}))["data"]
    cycled = (await client.request({"id": "c", "type": "cycle_thinking_level"}))["data"]["level"]
    assert cycled == levels[(levels.index(state["thinkingLevel"]) + 1) % len(levels)]
    assert {"type": "thinking_level_changed", "level": cycled} in client.received
    assert (await client.request({"id": "s1", "type": "get_state"}))["data"]["thinkingLevel"] == cycled
    assert await client.close() == 0
