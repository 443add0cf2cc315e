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

from apex_coding_agent._lazy import declared_exports, lazy_exports

if TYPE_CHECKING:
    from apex_coding_agent.compaction.branch import BranchCollection as BranchCollection
    from apex_coding_agent.compaction.branch import BranchPreparation as BranchPreparation
    from apex_coding_agent.compaction.branch import BranchSummaryResult as BranchSummaryResult
    from apex_coding_agent.compaction.branch import apply_branch_summary as apply_branch_summary
    from apex_coding_agent.compaction.branch import (
        collect_entries_for_branch_summary as collect_entries_for_branch_summary,
    )
    from apex_coding_agent.compaction.branch import prepare_branch_entries as prepare_branch_entries
    from apex_coding_agent.compaction.branch import summarize_branch as summarize_branch
    from apex_coding_agent.compaction.compact import ALREADY_COMPACTED as ALREADY_COMPACTED
    from apex_coding_agent.compaction.compact import NOTHING_TO_COMPACT as NOTHING_TO_COMPACT
    from apex_coding_agent.compaction.compact import CompactionResult as CompactionResult
    from apex_coding_agent.compaction.compact import CompactionTrigger as CompactionTrigger
    from apex_coding_agent.compaction.compact import apply_compaction as apply_compaction
    from apex_coding_agent.compaction.compact import compact as compact
    from apex_coding_agent.compaction.compact import compact_branch as compact_branch
    from apex_coding_agent.compaction.compact import result_from_summary as result_from_summary
    from apex_coding_agent.compaction.cut_point import CutPoint as CutPoint
    from apex_coding_agent.compaction.cut_point import find_cut_point as find_cut_point
    from apex_coding_agent.compaction.file_ops import FileOps as FileOps
    from apex_coding_agent.compaction.path import latest_compaction_index as latest_compaction_index
    from apex_coding_agent.compaction.prepare import CompactionPreparation as CompactionPreparation
    from apex_coding_agent.compaction.prepare import context_messages as context_messages
    from apex_coding_agent.compaction.prepare import prepare_compaction as prepare_compaction
    from apex_coding_agent.compaction.serialize import serialize_conversation as serialize_conversation
    from apex_coding_agent.compaction.settings import BranchSummarySettings as BranchSummarySettings
    from apex_coding_agent.compaction.settings import CompactionSettings as CompactionSettings
    from apex_coding_agent.compaction.settings import retry_policy_from_settings as retry_policy_from_settings
    from apex_coding_agent.compaction.summarize import CompleteFn as CompleteFn
    from apex_coding_agent.compaction.summarize import SummaryFailure as SummaryFailure
    from apex_coding_agent.compaction.summarize import SummaryRequestOptions as SummaryRequestOptions
    from apex_coding_agent.compaction.summarize import complete_fn_from_stream as complete_fn_from_stream
    from apex_coding_agent.compaction.tokens import ContextEstimate as ContextEstimate
    from apex_coding_agent.compaction.tokens import context_tokens as context_tokens
    from apex_coding_agent.compaction.tokens import estimate_context_tokens as estimate_context_tokens
    from apex_coding_agent.compaction.tokens import estimate_tokens as estimate_tokens
    from apex_coding_agent.compaction.tokens import should_compact as should_compact

# Names load on first access (PEP 562): a run checks the compaction threshold (settings, token counts) on every
# prompt but loads the summarizer, the cut-point search and branch summaries only when it compacts.
_EXPORTS = declared_exports(__file__)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _Package(ModuleType):
    """Keeps the exported function `compact` when its submodule `compaction.compact` is imported.

    Importing a submodule sets it as an attribute of its package; with lazy exports that would make
    `from apex_coding_agent.compaction import compact` return the module once anything imported
    `apex_coding_agent.compaction.compact` directly. The submodule stays reachable through `sys.modules`.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = sorted(_EXPORTS)
