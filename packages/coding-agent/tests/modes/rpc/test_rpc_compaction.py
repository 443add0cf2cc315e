"""RPC `compact` end to end (compaction.md check 18, §8, §10): the faux model answers the summary request."""

from __future__ import annotations

import math
from typing import Any

from rpc_harness import RpcHarness

from apex_ai.options import StreamOptions
from apex_ai.providers.faux import FauxState, faux_assistant_message
from apex_ai.types import AssistantMessage, Context, Model, TextContent, UserMessage

FIRST = "one " * 100
# Long enough that the cut lands on it: the first exchange is summarized, this one is kept.
SECOND = "please look at this carefully " * 12
SUMMARY = "## Goal\nCount to one.\n"


def _is(kind: str) -> Any:
    return lambda record: record.get("type") == kind


async def test_compact_returns_the_compaction_result(rpc: RpcHarness) -> None:
    requests: list[tuple[Context, StreamOptions]] = []

    def summarize(context: Context, options: StreamOptions, state: FauxState, model: Model) -> AssistantMessage:
        requests.append((context, options))
        return faux_assistant_message(SUMMARY)

    rpc.settings.set("compaction.keepRecentTokens", 50)
    rpc.script(faux_assistant_message("a1"), faux_assistant_message("a2"), summarize)
    client = await rpc.client()
    for text in (FIRST, SECOND):
        client.send({"type": "prompt", "message": text})
        await client.until(_is("agent_settled"))
    forks = await client.request({"id": "f", "type": "get_fork_messages"})
    second_entry = next(m["entryId"] for m in forks["data"]["messages"] if m["text"] == SECOND)
    before = await client.request({"id": "m0", "type": "get_messages"})
    last_usage = before["data"]["messages"][-1]["usage"]

    client.send({"id": "c", "type": "compact", "customInstructions": "Focus on counting."})
    response, events = await client.response("c")

    assert response["success"] is True and response["command"] == "compact"
    data = response["data"]
    assert set(data) >= {"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter"}
    assert data["summary"].startswith(SUMMARY.rstrip("\n"))
    assert data["firstKeptEntryId"] == second_entry
    # The context before: the last reply's reported size, nothing after it.
    assert data["tokensBefore"] == last_usage["totalTokens"] > 0
    # The context after: the summary message, the kept prompt and its reply, each chars / 4 rounded up.
    expected_after = sum(math.ceil(len(text) / 4) for text in (data["summary"], SECOND, "a2"))
    assert data["estimatedTokensAfter"] == expected_after
    assert data["usage"]["output"] > 0 and data["details"] == {"readFiles": [], "modifiedFiles": []}

    kinds = [e["type"] for e in events]
    assert kinds == ["compaction_start", "compaction_end"]
    assert events[0] == {"type": "compaction_start", "reason": "manual"}
    assert events[1] == {"type": "compaction_end", "reason": "manual", "result": data, "aborted": False,
                         "willRetry": False}  # fmt: skip

    # The summarizer saw the first exchange and the custom instructions, not the kept prompt.
    assert len(requests) == 1
    context, options = requests[0]
    prompt = context.messages[-1]
    assert isinstance(prompt, UserMessage) and not isinstance(prompt.content, str)
    asked = "".join(block.text for block in prompt.content if isinstance(block, TextContent))
    assert "one one" in asked and "Focus on counting." in asked and SECOND not in asked

    after = await client.request({"id": "m1", "type": "get_messages"})
    assert [m["role"] for m in after["data"]["messages"]] == ["compactionSummary", "user", "assistant"]
    again = await client.request({"id": "c2", "type": "compact"})
    assert again["success"] is False and again["error"] == "Already compacted"
    assert await client.close() == 0
