"""Generating a compaction and applying it to a session.

`compact()` never changes the session: it returns a `CompactionResult` ready to be appended as a `compaction`
entry, or a `SummaryFailure` (nothing dropped). The runtime decides when to compact (threshold, overflow, manual),
emits events, holds the lock between manual and automatic compaction, and calls `apply_compaction`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from apex_agent.messages import AgentMessage
from apex_ai.types import Model, Usage
from apex_coding_agent.compaction.file_ops import strip_file_lists
from apex_coding_agent.compaction.prepare import CompactionPreparation, prepare_compaction
from apex_coding_agent.compaction.prompts import (
    NO_PRIOR_HISTORY,
    SPLIT_TURN_SEPARATOR,
    compaction_prompt,
    turn_prefix_prompt,
)
from apex_coding_agent.compaction.serialize import serialize_conversation
from apex_coding_agent.compaction.settings import CompactionSettings
from apex_coding_agent.compaction.summarize import (
    SummarizationError,
    SummaryFailure,
    SummaryRequestOptions,
    SummaryText,
    add_usage,
    input_char_budget,
    request_summary,
    summary_max_tokens,
)
from apex_coding_agent.compaction.tokens import estimate_tokens
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.entries import CompactionEntry, EntryBase

CompactionTrigger: TypeAlias = Literal["manual", "threshold", "overflow"]
MIN_FREED_RATIO = 0.10
"""A compaction that frees less than this share of the context is flagged `insufficient`."""

ALREADY_COMPACTED = "Already compacted"
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
STALE_RESULT = "The session changed while the summary was generated"


@dataclass(slots=True)
class CompactionResult:
    """A generated compaction, not yet in the session.

    Entry fields: `summary`, `first_kept_entry_id`, `tokens_before`, `details`, `usage`, `from_hook`,
    `retained_tail`. Bookkeeping beyond the entry: `trigger`, `model` (`provider/id` of the summarizer),
    `tokens_after` (estimate of the context once applied) and `insufficient` with `warning` when the compaction
    frees less than 10% of the context, so an automatic caller knows compacting again will not help.
    `leaf_id` is the branch leaf the result was prepared on.
    """

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    tokens_after: int
    trigger: CompactionTrigger
    model: str
    # Producer-defined JSON value; built-in summaries use {"readFiles": [...], "modifiedFiles": [...]}.
    details: Any = None
    usage: Usage | None = None
    from_hook: bool = False
    retained_tail: list[AgentMessage] = field(default_factory=list)
    insufficient: bool = False
    warning: str | None = None
    leaf_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The RPC `compact` response data / `compaction_end.result` (camelCase; unset optionals omitted)."""
        data: dict[str, Any] = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "estimatedTokensAfter": self.tokens_after,
        }
        if self.usage is not None:
            data["usage"] = self.usage.to_wire()
        if self.details is not None:
            data["details"] = self.details
        return data


def estimate_tokens_after(summary: str, kept: Sequence[AgentMessage]) -> int:
    """Estimated context once compacted: the summary message plus the kept messages."""
    summary_message = CompactionSummaryMessage(summary=summary, tokens_before=0, timestamp=0)
    return estimate_tokens(summary_message) + sum(estimate_tokens(m) for m in kept)


def _insufficient(tokens_before: int, tokens_after: int) -> tuple[bool, str | None]:
    if tokens_before <= 0:
        return False, None
    freed = tokens_before - tokens_after
    if freed >= MIN_FREED_RATIO * tokens_before:
        return False, None
    return True, (
        f"Compaction freed only {max(freed, 0)} of {tokens_before} tokens (less than 10%); "
        "compacting again will not help"
    )


def _model_label(model: Model) -> str:
    return f"{model.provider}/{model.id}"


def result_from_summary(
    preparation: CompactionPreparation,
    summary: str,
    *,
    trigger: CompactionTrigger,
    model: str,
    details: Any = None,  # producer-defined JSON value
    usage: Usage | None = None,
    from_hook: bool = False,
    first_kept_entry_id: str | None = None,
    tokens_before: int | None = None,
) -> CompactionResult:
    """Wrap a summary (generated or supplied by an extension) into a result with its bookkeeping."""
    tokens_after = estimate_tokens_after(summary, preparation.kept_messages)
    before = preparation.tokens_before if tokens_before is None else tokens_before
    insufficient, warning = _insufficient(before, tokens_after)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=first_kept_entry_id or preparation.first_kept_entry_id,
        tokens_before=before,
        tokens_after=tokens_after,
        trigger=trigger,
        model=model,
        details=details,
        usage=usage,
        from_hook=from_hook,
        retained_tail=list(preparation.kept_messages),
        insufficient=insufficient,
        warning=warning,
        leaf_id=preparation.leaf_id,
    )


async def _history_summary(
    preparation: CompactionPreparation, model: Model, options: SummaryRequestOptions, custom: str | None
) -> SummaryText:
    max_tokens = summary_max_tokens(model, math.floor(0.8 * preparation.settings.reserve_tokens))
    budget = input_char_budget(model, max_tokens, (preparation.previous_summary or "") + (custom or ""))
    conversation = serialize_conversation(preparation.messages_to_summarize, budget)
    prompt = compaction_prompt(conversation, preparation.previous_summary, custom)
    return await request_summary(model, prompt, max_tokens, options, failure_prefix="Summarization failed")


async def _turn_prefix_summary(
    preparation: CompactionPreparation, model: Model, options: SummaryRequestOptions
) -> SummaryText:
    max_tokens = summary_max_tokens(model, math.floor(0.5 * preparation.settings.reserve_tokens))
    conversation = serialize_conversation(preparation.turn_prefix_messages, input_char_budget(model, max_tokens))
    return await request_summary(
        model, turn_prefix_prompt(conversation), max_tokens, options, failure_prefix="Turn prefix summarization failed"
    )


async def generate_compaction_summary(
    preparation: CompactionPreparation,
    model: Model,
    options: SummaryRequestOptions,
    custom_instructions: str | None = None,
) -> SummaryText:
    """The summary text (file lists appended) and the summed usage. Raises `SummarizationError`."""
    usage: Usage | None = None
    if preparation.is_split_turn and not preparation.messages_to_summarize:
        # Nothing new before the split turn. The reference writes "No prior history." even when an earlier
        # compaction exists, which silently drops that summary; it is carried over instead (its file lists are
        # re-appended below from the cumulative tracking).
        previous = preparation.previous_summary
        history = strip_file_lists(previous) if previous else NO_PRIOR_HISTORY
    else:
        generated = await _history_summary(preparation, model, options, custom_instructions)
        history, usage = generated.text, generated.usage
    text = history
    if preparation.is_split_turn:
        # Sequential, not concurrent: when the first request fails the second is never paid for.
        prefix = await _turn_prefix_summary(preparation, model, options)
        text = history + SPLIT_TURN_SEPARATOR + prefix.text
        usage = add_usage(usage, prefix.usage)
    return SummaryText(text + preparation.file_ops.format(), usage or Usage())


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    options: SummaryRequestOptions | None = None,
    *,
    custom_instructions: str | None = None,
    trigger: CompactionTrigger = "manual",
) -> CompactionResult | SummaryFailure:
    """Summarize `preparation` with `model`. On failure or abort returns a `SummaryFailure` and drops nothing."""
    options = options or SummaryRequestOptions()
    try:
        generated = await generate_compaction_summary(preparation, model, options, custom_instructions)
    except SummarizationError as exc:
        return exc.to_failure()
    if options.signal is not None and options.signal.aborted:
        return SummaryFailure("aborted", "Compaction cancelled")
    return result_from_summary(
        preparation,
        generated.text,
        trigger=trigger,
        model=_model_label(model),
        details=preparation.file_ops.details(),
        usage=generated.usage,
    )


async def compact_branch(
    path: Sequence[EntryBase],
    model: Model,
    settings: CompactionSettings | None = None,
    options: SummaryRequestOptions | None = None,
    *,
    custom_instructions: str | None = None,
    trigger: CompactionTrigger = "manual",
) -> CompactionResult | SummaryFailure:
    """`prepare_compaction` + `compact` for the active branch `path`: `SessionManager.get_branch_view()` (entries
    parsed only from the previous compaction's kept range on) or `get_branch()`."""
    if path and isinstance(path[-1], CompactionEntry):
        return SummaryFailure("already_compacted", ALREADY_COMPACTED)
    preparation = prepare_compaction(path, (settings or CompactionSettings()).for_window(model.context_window))
    if preparation is None:
        return SummaryFailure("nothing_to_compact", NOTHING_TO_COMPACT)
    return await compact(preparation, model, options, custom_instructions=custom_instructions, trigger=trigger)


class CompactionTarget(Protocol):
    """What `apply_compaction` needs from `SessionManager`."""

    def get_leaf_id(self) -> str | None: ...

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,  # producer-defined JSON value
        from_hook: bool = False,
        usage: Usage | None = None,
        retained_tail: Sequence[AgentMessage] | None = None,
        *,
        trigger: str | None = None,
        tokens_after: int | None = None,
        model: str | None = None,
    ) -> str: ...


def apply_compaction(session: CompactionTarget, result: CompactionResult) -> str:
    """Append `result` as a `compaction` entry at the leaf it was prepared on; returns the entry id.

    The entry records the result's bookkeeping too: `trigger`, `tokensAfter` and `model` (omitted when empty).

    Raises `ValueError` when the leaf moved since preparation: the retained tail would miss the new entries.
    """
    if result.leaf_id is not None and session.get_leaf_id() != result.leaf_id:
        raise ValueError(STALE_RESULT)
    return session.append_compaction(
        result.summary,
        result.first_kept_entry_id,
        result.tokens_before,
        details=result.details,
        from_hook=result.from_hook,
        usage=result.usage,
        retained_tail=result.retained_tail,
        trigger=result.trigger,
        tokens_after=result.tokens_after,
        model=result.model or None,
    )


__all__ = [
    "ALREADY_COMPACTED",
    "MIN_FREED_RATIO",
    "NOTHING_TO_COMPACT",
    "STALE_RESULT",
    "CompactionResult",
    "CompactionTarget",
    "CompactionTrigger",
    "apply_compaction",
    "compact",
    "compact_branch",
    "estimate_tokens_after",
    "generate_compaction_summary",
    "result_from_summary",
]
