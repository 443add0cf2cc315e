"""Compaction and branch summarization (spec compaction.md §2, §4-§7, §9).

Pure functions over session entries plus two model calls: `prepare_compaction` / `compact` (or `compact_branch`)
produce a `CompactionResult` that `apply_compaction` appends; `collect_entries_for_branch_summary` /
`summarize_branch` produce the data of a `branch_summary` entry. Deciding *when* to compact, events and locking
belong to the session runtime.
"""

from apex_coding_agent.compaction.branch import (
    BranchCollection,
    BranchPreparation,
    BranchSummaryResult,
    apply_branch_summary,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
    summarize_branch,
)
from apex_coding_agent.compaction.compact import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    CompactionResult,
    CompactionTrigger,
    apply_compaction,
    compact,
    compact_branch,
    result_from_summary,
)
from apex_coding_agent.compaction.cut_point import CutPoint, find_cut_point
from apex_coding_agent.compaction.file_ops import FileOps
from apex_coding_agent.compaction.path import latest_compaction_index
from apex_coding_agent.compaction.prepare import CompactionPreparation, context_messages, prepare_compaction
from apex_coding_agent.compaction.serialize import serialize_conversation
from apex_coding_agent.compaction.settings import (
    BranchSummarySettings,
    CompactionSettings,
    retry_policy_from_settings,
)
from apex_coding_agent.compaction.summarize import (
    CompleteFn,
    SummaryFailure,
    SummaryRequestOptions,
    complete_fn_from_stream,
)
from apex_coding_agent.compaction.tokens import (
    ContextEstimate,
    context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    should_compact,
)

__all__ = [
    "ALREADY_COMPACTED",
    "NOTHING_TO_COMPACT",
    "BranchCollection",
    "BranchPreparation",
    "BranchSummaryResult",
    "BranchSummarySettings",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "CompactionTrigger",
    "CompleteFn",
    "ContextEstimate",
    "CutPoint",
    "FileOps",
    "SummaryFailure",
    "SummaryRequestOptions",
    "apply_branch_summary",
    "apply_compaction",
    "collect_entries_for_branch_summary",
    "compact",
    "compact_branch",
    "complete_fn_from_stream",
    "context_messages",
    "context_tokens",
    "estimate_context_tokens",
    "estimate_tokens",
    "latest_compaction_index",
    "find_cut_point",
    "prepare_branch_entries",
    "prepare_compaction",
    "result_from_summary",
    "retry_policy_from_settings",
    "serialize_conversation",
    "should_compact",
    "summarize_branch",
]
