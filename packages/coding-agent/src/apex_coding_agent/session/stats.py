"""Whole-session statistics: counts and usage over **all** entries, abandoned branches and
compacted history included. `contextUsage` needs the model and the current context estimate, so the runtime adds it.
"""

from __future__ import annotations

from pydantic import field_serializer

from apex_ai._wire import WireModel
from apex_ai.types import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.session.entries import BranchSummaryEntry, CompactionEntry, EntryBase, MessageEntry
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


class StatsTally:
    """Running counters of `SessionStats`: `add` folds in one entry, `stats` reports the totals so far.

    The one place that decides how an entry counts; `compute_session_stats` feeds it every entry at once and the
    runtime's incremental cache feeds it only the entries appended since its last call.
    """

    __slots__ = (
        "assistant",
        "cache_read",
        "cache_write",
        "cost",
        "input",
        "messages",
        "output",
        "tool_calls",
        "tool_results",
        "user",
    )

    def __init__(self) -> None:
        self.user = self.assistant = self.tool_calls = self.tool_results = self.messages = 0
        self.input = self.output = self.cache_read = self.cache_write = 0
        self.cost = 0.0

    def _add_usage(self, usage: Usage) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total

    def add(self, entry: EntryBase) -> None:
        """Count one entry: messages by role, tool calls, and the usage of assistant/tool-result messages and of
        compaction/branch summaries."""
        if isinstance(entry, MessageEntry):
            message = entry.message
            if isinstance(message, SystemMessage):
                return  # the record of the prompt and tools, not a message of the conversation
            self.messages += 1
            if isinstance(message, UserMessage):
                self.user += 1
            elif isinstance(message, AssistantMessage):
                self.assistant += 1
                self.tool_calls += sum(1 for block in message.content if isinstance(block, ToolCall))
                self._add_usage(message.usage)
            elif isinstance(message, ToolResultMessage):
                self.tool_results += 1
                if message.usage is not None:
                    self._add_usage(message.usage)
        elif isinstance(entry, CompactionEntry | BranchSummaryEntry) and entry.usage is not None:
            self._add_usage(entry.usage)

    def stats(self, manager: SessionManager) -> SessionStats:
        """A new `SessionStats` (without `context_usage`) of the counted entries, for `manager`'s session."""
        return SessionStats(
            session_file=str(manager.session_file) if manager.session_file is not None else None,
            session_id=manager.session_id,
            user_messages=self.user,
            assistant_messages=self.assistant,
            tool_calls=self.tool_calls,
            tool_results=self.tool_results,
            total_messages=self.messages,
            tokens=TokenStats(
                input=self.input,
                output=self.output,
                cache_read=self.cache_read,
                cache_write=self.cache_write,
                total=self.input + self.output + self.cache_read + self.cache_write,
            ),
            cost=self.cost,
        )


def compute_session_stats(manager: SessionManager) -> SessionStats:
    """Stats of every entry of `manager`'s session (parses all entries)."""
    tally = StatsTally()
    for entry in manager.get_entries():
        tally.add(entry)
    return tally.stats(manager)


__all__ = ["ContextUsage", "SessionStats", "StatsTally", "TokenStats", "compute_session_stats"]
