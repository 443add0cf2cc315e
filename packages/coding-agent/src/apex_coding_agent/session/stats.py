"""Whole-session statistics (spec sessions.md §11): counts and usage over **all** entries, abandoned branches and
compacted history included. `contextUsage` needs the model and the current context estimate, so the runtime adds it.
"""

from __future__ import annotations

from pydantic import field_serializer

from apex_ai._wire import WireModel
from apex_ai.types import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.session.entries import BranchSummaryEntry, CompactionEntry, MessageEntry
from apex_coding_agent.session.session_manager import SessionManager


class TokenStats(WireModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0


class ContextUsage(WireModel):
    """`tokens`/`percent` are None right after a compaction, until the next assistant response."""

    tokens: int | None
    context_window: int
    percent: float | None


class SessionStats(WireModel):
    """The RPC `get_session_stats` payload, in the key order of the pi capture."""

    session_file: str | None = None
    session_id: str
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    total_messages: int = 0
    tokens: TokenStats
    cost: float = 0
    context_usage: ContextUsage | None = None

    @field_serializer("cost", when_used="json")
    def _js_cost(self, value: float) -> float | int:
        # JavaScript writes 0 for 0.0; the pi capture has `"cost":0`.
        return int(value) if float(value).is_integer() else value


def _add(tokens: TokenStats, usage: Usage) -> float:
    tokens.input += usage.input
    tokens.output += usage.output
    tokens.cache_read += usage.cache_read
    tokens.cache_write += usage.cache_write
    return usage.cost.total


def compute_session_stats(manager: SessionManager) -> SessionStats:
    """Stats of every entry of `manager`'s session (parses all entries)."""
    tokens = TokenStats()
    stats = SessionStats(
        session_file=str(manager.session_file) if manager.session_file is not None else None,
        session_id=manager.session_id,
        tokens=tokens,
    )
    cost = 0.0
    for entry in manager.get_entries():
        if isinstance(entry, MessageEntry):
            stats.total_messages += 1
            message = entry.message
            if isinstance(message, UserMessage):
                stats.user_messages += 1
            elif isinstance(message, AssistantMessage):
                stats.assistant_messages += 1
                stats.tool_calls += sum(1 for block in message.content if isinstance(block, ToolCall))
                cost += _add(tokens, message.usage)
            elif isinstance(message, ToolResultMessage):
                stats.tool_results += 1
                if message.usage is not None:
                    cost += _add(tokens, message.usage)
        elif isinstance(entry, CompactionEntry | BranchSummaryEntry) and entry.usage is not None:
            cost += _add(tokens, entry.usage)
    tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write
    stats.cost = cost
    return stats


__all__ = ["ContextUsage", "SessionStats", "TokenStats", "compute_session_stats"]
