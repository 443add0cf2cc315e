"""Session stats over all entries (spec sessions.md §11, check 19), shaped like the pi `rpc` capture."""

from __future__ import annotations

from pathlib import Path

from session_test_helpers import user

from apex_ai.types import AssistantMessage, Cost, TextContent, ToolCall, ToolResultMessage, Usage
from apex_coding_agent.session.session_manager import SessionManager
from apex_coding_agent.session.stats import compute_session_stats


def _assistant(content: list[TextContent | ToolCall], inp: int, out: int, cost: float = 0) -> AssistantMessage:
    return AssistantMessage(
        content=content,  # type: ignore[arg-type]
        api="anthropic-messages",
        provider="fake",
        model="fake-model",
        usage=Usage(input=inp, output=out, total_tokens=inp + out, cost=Cost(total=cost)),
        stop_reason="stop",
        timestamp=2,
    )


def test_stats_match_rpc_capture_shape(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path), id="s1")
    sm.append_message(user("Run echo hello"))
    sm.append_message(_assistant([ToolCall(id="t", name="bash", arguments={"command": "echo hello"})], 120, 15))
    sm.append_message(
        ToolResultMessage(tool_call_id="t", tool_name="bash", content=[TextContent(text="hello")], timestamp=3)
    )
    sm.append_message(_assistant([TextContent(text="The command printed: hello")], 150, 8))
    wire = compute_session_stats(sm).to_wire()
    assert wire == {
        "sessionId": "s1",
        "userMessages": 1,
        "assistantMessages": 2,
        "toolCalls": 1,
        "toolResults": 1,
        "totalMessages": 4,
        "tokens": {"input": 270, "output": 23, "cacheRead": 0, "cacheWrite": 0, "total": 293},
        "cost": 0,
    }
    assert compute_session_stats(sm).to_json().endswith('"cost":0}')


def test_stats_include_abandoned_branches_compaction_and_tool_usage(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    first = sm.append_message(user("q"))
    sm.append_message(_assistant([TextContent(text="a")], 10, 1, cost=0.5))
    sm.branch(first)  # the assistant above is now on an abandoned branch
    sm.append_message(
        ToolResultMessage(tool_call_id="x", tool_name="task", usage=Usage(input=5, output=5), timestamp=4)
    )
    sm.append_compaction("s", first, 100, usage=Usage(input=100, output=20, cost=Cost(total=0.25)))
    stats = compute_session_stats(sm)
    assert (stats.assistant_messages, stats.tool_results, stats.total_messages) == (1, 1, 3)
    assert (stats.tokens.input, stats.tokens.output, stats.tokens.total) == (115, 26, 141)
    assert stats.cost == 0.75
