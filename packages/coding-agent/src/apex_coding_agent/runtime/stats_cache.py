"""Whole-session statistics kept up to date by appends instead of a walk over every entry per call.

`compute_session_stats` parses and walks all entries (0.6 s at 50k entries), and the app's footer asks after every
update. `SessionStatsCache` counts each record once: a call folds in only the records appended since the previous
call. A session manager only ever appends to its record list or replaces it whole (new session, fork, clone), so the
cache checks that the last record it counted is still at the same position; when it is not, it starts over. Its
figures equal `compute_session_stats` (tests compare the two after appends).
"""

from __future__ import annotations

from itertools import islice

from apex_ai.types import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from apex_coding_agent.session.entries import BranchSummaryEntry, CompactionEntry, EntryBase, MessageEntry
from apex_coding_agent.session.session_file import Record
from apex_coding_agent.session.session_manager import SessionManager
from apex_coding_agent.session.stats import SessionStats, TokenStats


class _Totals:
    """The counters of `SessionStats` without the session's identity (file, id) or the context usage."""

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

    def add_usage(self, usage: Usage) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total

    def add(self, entry: EntryBase) -> None:
        if isinstance(entry, MessageEntry):
            self.messages += 1
            message = entry.message
            if isinstance(message, UserMessage):
                self.user += 1
            elif isinstance(message, AssistantMessage):
                self.assistant += 1
                self.tool_calls += sum(1 for block in message.content if isinstance(block, ToolCall))
                self.add_usage(message.usage)
            elif isinstance(message, ToolResultMessage):
                self.tool_results += 1
                if message.usage is not None:
                    self.add_usage(message.usage)
        elif isinstance(entry, CompactionEntry | BranchSummaryEntry) and entry.usage is not None:
            self.add_usage(entry.usage)


class SessionStatsCache:
    """Incremental `compute_session_stats` for one `SessionManager` (whichever session it currently holds)."""

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self._totals = _Totals()
        self._count = 0
        self._last: Record | None = None

    def _still_valid(self) -> bool:
        """True when the counted records are still the manager's first `_count` records."""
        if self._count == 0:
            return True
        # islice skips the counted records at C speed; only the last counted one is compared (by identity).
        at_last = next(islice(self._manager.iter_records(), self._count - 1, None), None)
        return at_last is self._last

    def _catch_up(self) -> None:
        if not self._still_valid():
            self._totals = _Totals()
            self._count = 0
            self._last = None
        for record in islice(self._manager.iter_records(), self._count, None):
            self._totals.add(record.entry)
            self._count += 1
            self._last = record

    def stats(self) -> SessionStats:
        """A new `SessionStats` (without `context_usage`) equal to `compute_session_stats(manager)`."""
        self._catch_up()
        totals = self._totals
        manager = self._manager
        tokens = TokenStats(
            input=totals.input,
            output=totals.output,
            cache_read=totals.cache_read,
            cache_write=totals.cache_write,
            total=totals.input + totals.output + totals.cache_read + totals.cache_write,
        )
        return SessionStats(
            session_file=str(manager.session_file) if manager.session_file is not None else None,
            session_id=manager.session_id,
            user_messages=totals.user,
            assistant_messages=totals.assistant,
            tool_calls=totals.tool_calls,
            tool_results=totals.tool_results,
            total_messages=totals.messages,
            tokens=tokens,
            cost=totals.cost,
        )


__all__ = ["SessionStatsCache"]
