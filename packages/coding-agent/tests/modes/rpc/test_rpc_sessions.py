"""`list_sessions` and `search_sessions` over RPC: the session index's listing and search, with the CLI's fields."""

from __future__ import annotations

from rpc_harness import RpcClient, RpcHarness

from apex_ai.types import AssistantMessage, TextContent, Usage, UserMessage
from apex_coding_agent.session import SessionManager


def _session(rpc: RpcHarness, question: str) -> SessionManager:
    manager = SessionManager.create(str(rpc.cwd), rpc.sessions_dir)
    manager.append_message(UserMessage(content=question, timestamp=1))
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="an answer")], api="x", provider="p", model="m", usage=Usage(),
            stop_reason="stop", timestamp=2,
        )
    )  # fmt: skip
    manager.close()
    return manager


async def test_list_and_search_sessions(rpc: RpcHarness) -> None:
    older = _session(rpc, "how to vacuum a sqlite database")
    newer = _session(rpc, "rotate the logs weekly")
    client = RpcClient()
    await client.start(await rpc.runtime(persisted=True))
    listed = await client.request({"id": 1, "type": "list_sessions"})
    assert [s["id"] for s in listed["data"]["sessions"]] == [newer.session_id, older.session_id]
    assert listed["data"]["sessions"][0]["firstMessage"] == "rotate the logs weekly"
    found = await client.request({"id": 2, "type": "search_sessions", "query": "VACUUM sqlite", "limit": 5})
    assert found["success"] is True, found
    [hit] = found["data"]["hits"]
    assert hit["sessionId"] == older.session_id and hit["path"] == str(older.session_file)
    assert [hit["snippet"][a:b] for a, b in hit["highlights"]] == ["vacuum", "sqlite"]
    elsewhere = await client.request({"id": 3, "type": "search_sessions", "query": "vacuum", "cwd": "/elsewhere"})
    assert elsewhere["data"] == {"hits": []}
    empty = await client.request({"id": 4, "type": "search_sessions", "query": "  "})
    assert empty["success"] is False and "Nothing to search for" in empty["error"]
    wrong = await client.request({"id": 5, "type": "search_sessions", "query": "x", "limit": "ten"})
    assert wrong["success"] is False
    assert await client.close() == 0
