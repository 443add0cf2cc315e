"""Compaction and branch summarization.

Pure functions over session entries plus two model calls: `prepare_compaction` / `compact` (or `compact_branch`)
produce a `CompactionResult` that `apply_compaction` appends; `collect_entries_for_branch_summary` /
`summarize_branch` produce the data of a `branch_summary` entry. Deciding *when* to compact, events and locking
belong to the session runtime.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

from apex_coding_agent._lazy import lazy_exports

if TYPE_CHECKING:
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

# Names load on first access (PEP 562): a run checks the compaction threshold (settings, token counts) on every
# prompt but loads the summarizer, the cut-point search and branch summaries only when it compacts.
_EXPORTS: dict[str, str] = {
    "BranchCollection": ".branch",
    "BranchPreparation": ".branch",
    "BranchSummaryResult": ".branch",
    "apply_branch_summary": ".branch",
    "collect_entries_for_branch_summary": ".branch",
    "prepare_branch_entries": ".branch",
    "summarize_branch": ".branch",
    "ALREADY_COMPACTED": ".compact",
    "CompactionResult": ".compact",
    "CompactionTrigger": ".compact",
    "NOTHING_TO_COMPACT": ".compact",
    "apply_compaction": ".compact",
    "compact": ".compact",
    "compact_branch": ".compact",
    "result_from_summary": ".compact",
    "CutPoint": ".cut_point",
    "find_cut_point": ".cut_point",
    "FileOps": ".file_ops",
    "latest_compaction_index": ".path",
    "CompactionPreparation": ".prepare",
    "context_messages": ".prepare",
    "prepare_compaction": ".prepare",
    "serialize_conversation": ".serialize",
    "BranchSummarySettings": ".settings",
    "CompactionSettings": ".settings",
    "retry_policy_from_settings": ".settings",
    "CompleteFn": ".summarize",
    "SummaryFailure": ".summarize",
    "SummaryRequestOptions": ".summarize",
    "complete_fn_from_stream": ".summarize",
    "ContextEstimate": ".tokens",
    "context_tokens": ".tokens",
    "estimate_context_tokens": ".tokens",
    "estimate_tokens": ".tokens",
    "should_compact": ".tokens",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _Package(ModuleType):
    """Keeps the exported function `compact` when its submodule `compaction.compact` is imported.

    Importing a submodule sets it as an attribute of its package; with lazy exports that would make
    `from apex_coding_agent.compaction import compact` return the module once anything imported
    `apex_coding_agent.compaction.compact` directly. The submodule stays reachable through `sys.modules`.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == f".{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

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
