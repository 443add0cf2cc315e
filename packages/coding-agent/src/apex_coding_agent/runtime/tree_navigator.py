"""`TreeNavigator`: moving within the session tree in place, with an optional summary of the abandoned branch
(`navigate_tree`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from apex_ai.abort import AbortController
from apex_ai.types import Model, TextContent, Usage
from apex_coding_agent.compaction.settings import BranchSummarySettings
from apex_coding_agent.core.settings import SettingsManager
from apex_coding_agent.extensions import events as ext
from apex_coding_agent.extensions.runner import ExtensionRunner
from apex_coding_agent.runtime.compaction_runner import SummaryRequests
from apex_coding_agent.runtime.session_errors import NO_MODEL_TEXT
from apex_coding_agent.session.entries import CustomMessageEntry, EntryBase, MessageEntry
from apex_coding_agent.session.session_manager import SessionManager, first_user_text

if TYPE_CHECKING:
    from apex_coding_agent.compaction.branch import BranchSummaryResult


@dataclass(frozen=True)
class NavigateTreeResult:
    """Outcome of `navigate_tree`. `editor_text`: the text of a user/custom message target, for the editor.
    `summary_entry`: the appended `branch_summary` entry. `aborted`: the summary was cancelled."""

    cancelled: bool = False
    editor_text: str | None = None
    summary_entry: EntryBase | None = None
    aborted: bool | None = None

    def to_wire(self) -> dict[str, object]:
        """The RPC / JSON shape: `{cancelled, editorText?, summaryEntry?, aborted?}`."""
        data: dict[str, object] = {"cancelled": self.cancelled}
        if self.editor_text is not None:
            data["editorText"] = self.editor_text
        if self.summary_entry is not None:
            data["summaryEntry"] = self.summary_entry.to_wire()
        if self.aborted is not None:
            data["aborted"] = self.aborted
        return data


def _entry_text(entry: EntryBase) -> str | None:
    """The editor text of a user message or custom message entry; None for every other entry."""
    if isinstance(entry, MessageEntry):
        return first_user_text(entry.message)
    if isinstance(entry, CustomMessageEntry):
        if isinstance(entry.content, str):
            return entry.content
        return "".join(block.text for block in entry.content if isinstance(block, TextContent))
    return None


class TreeNavigator:
    """Navigation of one session; `summarizing` is True while a branch summary is requested."""

    def __init__(
        self,
        *,
        model: Callable[[], Model | None],
        session_manager: SessionManager,
        settings_manager: SettingsManager,
        summaries: SummaryRequests,
        extension_runner: ExtensionRunner | None,
        lock: asyncio.Lock,
        reload_context: Callable[[], None],
    ) -> None:
        self._model = model
        self._manager = session_manager
        self._settings = settings_manager
        self._summaries = summaries
        self._runner = extension_runner
        self._lock = lock
        self._reload_context = reload_context
        self._controller: AbortController | None = None

    @property
    def summarizing(self) -> bool:
        return self._controller is not None

    def abort(self) -> None:
        """Cancel the branch summary of a running navigation (the navigation then reports `aborted`)."""
        if self._controller is not None:
            self._controller.abort()

    async def navigate(
        self,
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool,
        label: str | None,
    ) -> NavigateTreeResult:
        """`AgentSession.navigate_tree` once the session checked it may navigate."""
        from apex_coding_agent.compaction.branch import (
            BranchSummaryResult,
            apply_branch_summary,
            collect_entries_for_branch_summary,
        )

        manager = self._manager
        target = manager.get_entry(target_id)
        if target is None:
            raise ValueError(f"Entry {target_id} not found")
        old_leaf = manager.get_leaf_id()
        if target_id == old_leaf:
            return NavigateTreeResult(cancelled=False)
        editor_text = _entry_text(target)
        new_leaf = target.parent_id if editor_text is not None else target_id
        summary_entry: EntryBase | None = None
        collection = collect_entries_for_branch_summary(manager, old_leaf, target_id)
        entries = collection.entries if summarize else []
        supplied: BranchSummaryResult | None = None
        runner = self._runner
        if runner is not None and runner.has_handlers("session_before_tree"):
            preparation = {
                "targetId": target_id,
                "oldLeafId": old_leaf,
                "commonAncestorId": collection.common_ancestor_id,
                "entriesToSummarize": collection.entries,
                "userWantsSummary": summarize,
                "customInstructions": custom_instructions,
                "replaceInstructions": replace_instructions,
                "label": label,
            }
            decision = await runner.emit_session_before(
                ext.SessionBeforeTreeEvent(preparation=preparation, signal=None)
            )
            if decision is not None:
                if decision.cancel:
                    return NavigateTreeResult(cancelled=True)
                custom_instructions = decision.custom_instructions or custom_instructions
                if decision.replace_instructions is not None:
                    replace_instructions = decision.replace_instructions
                label = decision.label or label
                if summarize and decision.summary is not None:
                    usage = decision.summary.get("usage")
                    supplied = BranchSummaryResult(
                        str(decision.summary.get("summary", "")),
                        details=decision.summary.get("details"),
                        usage=Usage.model_validate(usage) if isinstance(usage, dict) else None,
                        from_hook=True,
                    )
        if supplied is not None:
            entry_id = apply_branch_summary(manager, new_leaf, supplied)
            summary_entry = manager.get_entry(entry_id)
        elif entries:
            summary_entry = await self._summarize_abandoned(
                entries, new_leaf, custom_instructions, replace_instructions
            )
            if summary_entry is None:
                return NavigateTreeResult(cancelled=True, aborted=True)
        elif new_leaf is None:
            manager.reset_leaf()
        else:
            manager.branch(new_leaf)
        if label:
            manager.append_label_change(summary_entry.id if summary_entry is not None else target_id, label)
        self._reload_context()
        if runner is not None and runner.has_handlers("session_tree"):
            await runner.emit(
                ext.SessionTreeEvent(
                    new_leaf_id=manager.get_leaf_id(),
                    old_leaf_id=old_leaf,
                    summary_entry=summary_entry,
                    from_extension=supplied is not None if summary_entry is not None else None,
                )
            )
        return NavigateTreeResult(cancelled=False, editor_text=editor_text, summary_entry=summary_entry)

    async def _summarize_abandoned(
        self,
        entries: Sequence[EntryBase],
        new_leaf: str | None,
        custom_instructions: str | None,
        replace_instructions: bool,
    ) -> EntryBase | None:
        """Summarize and append the `branch_summary` entry; None when aborted. Raises when the request failed."""
        from apex_coding_agent.compaction.branch import apply_branch_summary, summarize_branch
        from apex_coding_agent.compaction.summarize import SummaryFailure

        model = self._model()
        if model is None:
            raise RuntimeError(NO_MODEL_TEXT)
        controller = self._controller = AbortController()
        try:
            async with self._lock:
                outcome = await summarize_branch(
                    entries,
                    model,
                    self._summaries.options(model, controller.signal, "branchSummary", None),
                    BranchSummarySettings.from_settings(self._settings),
                    custom_instructions=custom_instructions,
                    replace_instructions=replace_instructions,
                )
        finally:
            self._controller = None
        if isinstance(outcome, SummaryFailure):
            if outcome.reason == "aborted":
                return None
            raise RuntimeError(outcome.message)
        entry_id = apply_branch_summary(self._manager, new_leaf, outcome)
        return self._manager.get_entry(entry_id)


__all__ = ["NavigateTreeResult", "TreeNavigator"]
