"""Branch summarization for tree navigation.

When the user leaves a branch (`/tree`), the abandoned part — from the old leaf up to the common ancestor with the
target — can be summarized into a `branch_summary` entry at the new position, so its work stays in context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from apex_agent.messages import AgentMessage
from apex_ai.types import Model, SystemMessage, ToolResultMessage, Usage
from apex_coding_agent.compaction.file_ops import FileOps
from apex_coding_agent.compaction.prompts import BRANCH_SUMMARY_PREAMBLE, NO_BRANCH_CONTENT, branch_summary_prompt
from apex_coding_agent.compaction.serialize import serialize_conversation
from apex_coding_agent.compaction.settings import BranchSummarySettings
from apex_coding_agent.compaction.summarize import (
    SummarizationError,
    SummaryFailure,
    SummaryRequestOptions,
    request_summary,
    summary_max_tokens,
)
from apex_coding_agent.compaction.tokens import estimate_tokens
from apex_coding_agent.session.context import project_entry
from apex_coding_agent.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    EntryBase,
    MessageEntry,
)
from apex_coding_agent.session.records import Record

BRANCH_SUMMARY_MAX_TOKENS = 2048
DEFAULT_CONTEXT_WINDOW = 128000


class BranchReader(Protocol):
    """What collection needs from `SessionManager`: the index of a path, entries parsed on demand."""

    def get_branch_records(self, from_id: str | None = None) -> list[Record]: ...


@dataclass(frozen=True, slots=True)
class BranchCollection:
    """Entries of the abandoned branch, oldest first, and the deepest entry shared with the target's path."""

    entries: list[EntryBase]
    common_ancestor_id: str | None


def collect_entries_for_branch_summary(
    session: BranchReader, old_leaf_id: str | None, target_id: str | None
) -> BranchCollection:
    """Entries from the old leaf up to (excluding) the common ancestor with `target_id`, chronological.

    The paths are compared by id from the index; only the collected entries are parsed.
    """
    if old_leaf_id is None:
        return BranchCollection([], None)
    old_path = session.get_branch_records(old_leaf_id)
    target_path = session.get_branch_records(target_id) if target_id is not None else []
    on_old = {record.id for record in old_path}
    ancestor = next((r.id for r in reversed(target_path) if r.id in on_old), None)
    collected: list[EntryBase] = []
    for record in reversed(old_path):
        if record.id == ancestor:
            break
        collected.append(record.entry)
    collected.reverse()
    return BranchCollection(collected, ancestor)


def _branch_message(entry: EntryBase) -> AgentMessage | None:
    if isinstance(entry, MessageEntry):
        message = entry.agent_message
        # Tool results are left out: the calls (kept) say what was done, and results are the bulk of the tokens.
        # System messages record the prompt and tools: not part of what the branch did.
        return None if isinstance(message, ToolResultMessage | SystemMessage) else message
    if isinstance(entry, CustomMessageEntry | BranchSummaryEntry | CompactionEntry):
        projected = project_entry(entry)
        return projected[0] if projected else None
    return None


@dataclass(slots=True)
class BranchPreparation:
    messages: list[AgentMessage] = field(default_factory=list)
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def prepare_branch_entries(entries: Sequence[EntryBase], token_budget: int) -> BranchPreparation:
    """Messages to summarize (newest kept first when over budget) and the file operations of the range.

    File lists of earlier built-in branch summaries in the range are merged in. A summary message that would
    overflow the budget is still taken while less than 90% of the budget is used: it stands for a lot of history.
    """
    prep = BranchPreparation()
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry) and not entry.from_hook:
            prep.file_ops.add_details(entry.details)
    taken: list[AgentMessage] = []
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        tokens = estimate_tokens(message)
        if token_budget > 0 and prep.total_tokens + tokens > token_budget:
            is_summary = isinstance(entry, CompactionEntry | BranchSummaryEntry)
            if is_summary and prep.total_tokens < 0.9 * token_budget:
                taken.append(message)
                prep.total_tokens += tokens
            break
        taken.append(message)
        prep.total_tokens += tokens
    taken.reverse()
    prep.messages = taken
    prep.file_ops.add_messages(taken)
    return prep


@dataclass(slots=True)
class BranchSummaryResult:
    """Data of the `branch_summary` entry to append (`SessionManager.branch_with_summary`)."""

    summary: str
    # Producer-defined JSON value; built-in: {"readFiles": [...], "modifiedFiles": [...]}.
    details: Any = None
    usage: Usage | None = None
    from_hook: bool = False


async def summarize_branch(
    entries: Sequence[EntryBase],
    model: Model,
    options: SummaryRequestOptions | None = None,
    settings: BranchSummarySettings | None = None,
    *,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummaryResult | SummaryFailure:
    """Summarize an abandoned branch. A failed or aborted request returns a `SummaryFailure` (nothing appended)."""
    options = options or SummaryRequestOptions()
    settings = settings or BranchSummarySettings()
    window = model.context_window or DEFAULT_CONTEXT_WINDOW
    budget = window - settings.reserve_for_window(window)
    prep = prepare_branch_entries(entries, budget)
    if not prep.messages:
        return BranchSummaryResult(NO_BRANCH_CONTENT, details=prep.file_ops.details())
    prompt = branch_summary_prompt(serialize_conversation(prep.messages), custom_instructions, replace_instructions)
    try:
        generated = await request_summary(
            model,
            prompt,
            summary_max_tokens(model, BRANCH_SUMMARY_MAX_TOKENS),
            options,
            failure_prefix="Branch summarization failed",
            use_reasoning=False,
        )
    except SummarizationError as exc:
        return exc.to_failure()
    summary = BRANCH_SUMMARY_PREAMBLE + generated.text + prep.file_ops.format()
    return BranchSummaryResult(summary, details=prep.file_ops.details(), usage=generated.usage)


class BranchSummaryTarget(Protocol):
    def branch_with_summary(
        self,
        target_id: str | None,
        summary: str,
        details: Any = None,  # producer-defined JSON value
        from_hook: bool = False,
        usage: Usage | None = None,
    ) -> str: ...


def apply_branch_summary(session: BranchSummaryTarget, new_leaf_id: str | None, result: BranchSummaryResult) -> str:
    """Move the leaf to `new_leaf_id` and append the summary there; returns the new entry's id (the new leaf)."""
    return session.branch_with_summary(
        new_leaf_id, result.summary, details=result.details, from_hook=result.from_hook, usage=result.usage
    )


__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "BranchCollection",
    "BranchPreparation",
    "BranchReader",
    "BranchSummaryResult",
    "BranchSummaryTarget",
    "apply_branch_summary",
    "collect_entries_for_branch_summary",
    "prepare_branch_entries",
    "summarize_branch",
]
