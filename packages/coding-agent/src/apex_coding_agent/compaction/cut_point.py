"""Where a compaction cuts the branch.

Entries before the cut are summarized; the cut entry and everything after it are kept verbatim. A cut never lands
on a tool result, so a kept tool result always has its call. When the cut lands inside a turn (on an assistant
message), the turn's opening part is summarized separately (split turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apex_agent.messages import AgentMessage
from apex_ai.types import SystemMessage
from apex_coding_agent.compaction.tokens import estimate_tokens
from apex_coding_agent.session.context import project_entry
from apex_coding_agent.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    EntryBase,
    MessageEntry,
)

CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


def entry_role(entry: EntryBase) -> str | None:
    """Role of the first message `entry` projects into context; None when it projects none."""
    if isinstance(entry, MessageEntry):
        role = getattr(entry.message, "role", None)
        # A system message records the prompt and tools, like a settings entry: never cut at, never summarized.
        return role if isinstance(role, str) and role != "system" else None
    if isinstance(entry, CustomMessageEntry):
        return "custom"
    if isinstance(entry, BranchSummaryEntry):
        return "branchSummary" if entry.summary else None
    if isinstance(entry, CompactionEntry):
        return "compactionSummary"
    return None


def entry_messages(entry: EntryBase) -> list[AgentMessage]:
    """Messages an entry contributes to a compaction range: its projection; nothing for compaction entries
    (their summary is handed over as `previousSummary`, their retained tail is the entries themselves)."""
    if isinstance(entry, MessageEntry):
        return [] if isinstance(entry.message, SystemMessage) else [entry.agent_message]
    if isinstance(entry, CompactionEntry):
        return []
    return project_entry(entry)


def is_valid_cut(entry: EntryBase) -> bool:
    """A non-compaction entry whose projection starts with a message of a cut role (never a tool result)."""
    return not isinstance(entry, CompactionEntry) and entry_role(entry) in CUT_ROLES


def is_turn_start(entry: EntryBase) -> bool:
    """An entry that begins a turn. A compaction entry never does: the turn it interrupted began before it."""
    return not isinstance(entry, CompactionEntry) and entry_role(entry) in TURN_START_ROLES


def entry_tokens(entry: EntryBase) -> int:
    return sum(estimate_tokens(m) for m in entry_messages(entry))


@dataclass(frozen=True, slots=True)
class CutPoint:
    """`first_kept_index`: first entry kept verbatim. With `is_split_turn`, `turn_start_index` is where the turn
    that the cut splits begins (else -1)."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _first_valid_from(entries: Sequence[EntryBase], begin: int, end: int) -> int | None:
    return next((i for i in range(begin, end) if is_valid_cut(entries[i])), None)


def find_cut_point(entries: Sequence[EntryBase], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Choose the cut in `entries[start:end]` so that about `keep_recent_tokens` of recent context is kept.

    Walks from the newest entry back, summing estimates; where the sum first reaches `keep_recent_tokens` the cut
    is the first valid cut entry at or after that point. Only the entries walked are estimated, so the cost is
    proportional to the kept part, plus one scan for the first valid cut when the walk finds none.
    """
    cut: int | None = None
    total = 0
    for index in range(end - 1, start - 1, -1):
        tokens = entry_tokens(entries[index])
        if tokens == 0:
            continue
        total += tokens
        if total >= keep_recent_tokens:
            cut = _first_valid_from(entries, index, end)
            break
    if cut is None:
        cut = _first_valid_from(entries, start, end)
    if cut is None:
        return CutPoint(start, -1, False)
    cut_entry = entries[cut]
    # Settings changes, labels and extension state just before the cut belong with the kept part: they describe
    # the model and metadata the kept messages were produced under.
    while cut > start:
        previous = entries[cut - 1]
        if isinstance(previous, CompactionEntry) or entry_role(previous) is not None:
            break
        cut -= 1
    if is_turn_start(cut_entry):
        return CutPoint(cut, -1, False)
    for index in range(cut - 1, start - 1, -1):
        if is_turn_start(entries[index]):
            return CutPoint(cut, index, True)
    return CutPoint(cut, -1, False)


__all__ = [
    "CUT_ROLES",
    "TURN_START_ROLES",
    "CutPoint",
    "entry_messages",
    "entry_role",
    "entry_tokens",
    "find_cut_point",
    "is_turn_start",
    "is_valid_cut",
]
