"""Compaction preparation: everything a summary request needs, computed from the active
branch without calling a model. Extensions see the result (`session_before_compact`).

The branch may be a lazy `BranchView` (`SessionManager.get_branch_view()`): then only the entries from the previous
compaction's kept range on are parsed, plus the previous compaction itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage, SystemMessage, ToolCall
from apex_coding_agent.compaction.cut_point import entry_messages, find_cut_point
from apex_coding_agent.compaction.file_ops import FileOps
from apex_coding_agent.compaction.path import index_of_id, latest_compaction_index
from apex_coding_agent.compaction.settings import CompactionSettings
from apex_coding_agent.compaction.tokens import context_tokens, estimate_tokens, has_valid_usage
from apex_coding_agent.session.context import project_entry
from apex_coding_agent.session.entries import CompactionEntry, EntryBase, MessageEntry


@dataclass(slots=True)
class CompactionPreparation:
    """What `compact()` summarizes and keeps.

    `messages_to_summarize` ends where the kept part (or, for a split turn, the split turn) begins;
    `turn_prefix_messages` is the split turn's opening part. `kept_messages` are the projected messages of the
    kept entries (cut → end): written as the entry's `retainedTail` and used for the size after compaction.
    `leaf_id` is the branch's last entry when prepared; the result may only be applied while it still is.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    kept_messages: list[AgentMessage] = field(default_factory=list)
    leaf_id: str | None = None


def context_messages(path: Sequence[EntryBase]) -> list[AgentMessage]:
    """The model context `path` yields, computed on parsed entries.

    Same rules as `session.context.build_context`: from the latest compaction on, with its retained tail, or with
    the entries from its `firstKeptEntryId` when it has none (older compaction entries in that range add nothing).
    """
    at = latest_compaction_index(path)
    if at < 0:
        selected: Sequence[EntryBase] = path
    else:
        compaction = path[at]
        assert isinstance(compaction, CompactionEntry)  # latest_compaction_index only returns compaction entries
        kept: Sequence[EntryBase] = ()
        if not compaction.retained_tail:
            first = index_of_id(path, compaction.first_kept_entry_id, at)
            kept = [e for e in path[first:at] if not isinstance(e, CompactionEntry)] if first is not None else ()
        selected = [compaction, *kept, *path[at + 1 :]]
    messages: list[AgentMessage] = []
    for entry in selected:
        messages.extend(project_entry(entry))
    return messages


def _reverse_context(path: Sequence[EntryBase]) -> Iterator[AgentMessage]:
    """The messages of `context_messages(path)`, newest first, produced lazily."""
    at = latest_compaction_index(path)
    for index in range(len(path) - 1, at, -1):
        yield from reversed(project_entry(path[index]))
    if at < 0:
        return
    compaction = path[at]
    assert isinstance(compaction, CompactionEntry)  # latest_compaction_index only returns compaction entries
    if compaction.retained_tail:
        yield from reversed(compaction.retained_tail)
    else:
        first = index_of_id(path, compaction.first_kept_entry_id, at)
        for index in range(at - 1, first - 1 if first is not None else at, -1):
            # entry_messages: an older compaction in the kept range contributes nothing (as in context_messages).
            yield from reversed(entry_messages(path[index]))
    yield from project_entry(compaction)[:1]


def estimate_path_tokens(path: Sequence[EntryBase]) -> int:
    """`estimate_context_tokens(context_messages(path)).tokens`, reading only the messages after the last valid
    usage report (a long branch costs what its tail costs)."""
    trailing = 0
    for message in _reverse_context(path):
        if isinstance(message, AssistantMessage) and has_valid_usage(message):
            return context_tokens(message.usage) + trailing
        trailing += estimate_tokens(message)
    return trailing


def _summarized_range(path: Sequence[EntryBase], begin: int, end: int, file_ops: FileOps) -> list[AgentMessage]:
    """Each non-compaction entry's first projected message; tool calls go to `file_ops`.

    One pass with a fast path for message entries: this loop runs over the whole summarized span.
    """
    messages: list[AgentMessage] = []
    append = messages.append
    for index in range(begin, end):
        entry = path[index]
        if isinstance(entry, MessageEntry):
            message = entry.message
            if isinstance(message, SystemMessage):
                continue  # the record of the prompt and tools, not conversation
            append(message)
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolCall):
                        file_ops.add_tool_call(block)
        elif not isinstance(entry, CompactionEntry):
            projected = project_entry(entry)
            if projected:
                append(projected[0])
    return messages


def _kept_messages(path: Sequence[EntryBase], begin: int) -> list[AgentMessage]:
    messages: list[AgentMessage] = []
    for entry in path[begin:]:
        messages.extend(entry_messages(entry))
    return messages


def prepare_compaction(
    path: Sequence[EntryBase], settings: CompactionSettings | None = None
) -> CompactionPreparation | None:
    """Prepare compacting the active branch `path` (root first, *unfiltered*): `SessionManager.get_branch_view()`
    (parses only what is read) or `get_branch()`.

    None when the branch ends with a compaction or nothing would be summarized.
    """
    settings = settings or CompactionSettings()
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    prev_index = latest_compaction_index(path)
    previous: CompactionEntry | None = None
    boundary = 0
    if prev_index >= 0:
        found = path[prev_index]
        assert isinstance(found, CompactionEntry)  # latest_compaction_index only returns compaction entries
        previous = found
        first_kept = index_of_id(path, previous.first_kept_entry_id, prev_index)
        boundary = first_kept if first_kept is not None else prev_index + 1

    cut = find_cut_point(path, boundary, len(path), settings.keep_recent_tokens)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    file_ops = FileOps()
    if previous is not None and not previous.from_hook:
        file_ops.add_details(previous.details)
    to_summarize = _summarized_range(path, boundary, history_end, file_ops)
    prefix = _summarized_range(path, cut.turn_start_index, cut.first_kept_index, file_ops) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None

    return CompactionPreparation(
        first_kept_entry_id=path[cut.first_kept_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=estimate_path_tokens(path),
        previous_summary=previous.summary if previous is not None else None,
        file_ops=file_ops,
        settings=settings,
        kept_messages=_kept_messages(path, cut.first_kept_index),
        leaf_id=path[-1].id,
    )


__all__ = [
    "CompactionPreparation",
    "context_messages",
    "estimate_path_tokens",
    "latest_compaction_index",
    "prepare_compaction",
]
