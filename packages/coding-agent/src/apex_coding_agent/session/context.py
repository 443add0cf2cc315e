"""Model context from the active branch.

Works on indexed `Record`s so that only the entries the context needs are parsed: the settings scan
(`stored_settings`, also used on its own where only the model and thinking level are needed) walks the path backwards
and stops once both the thinking level and the model are known, and messages are projected only from the latest
compaction on. `LazyContextMessages` projects the same messages on demand, newest first, so that a long session's
newest messages are available without parsing the whole branch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from apex_agent.messages import AgentMessage
from apex_ai.types import AssistantMessage
from apex_coding_agent.collector import collector_paused
from apex_coding_agent.messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from apex_coding_agent.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    EntryBase,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    iso_to_ms,
)
from apex_coding_agent.session.records import PAUSE_AT, Record, parse_records

DEFAULT_THINKING_LEVEL = "off"
# Entry types `project_entry` turns into messages; the others in the context range project to nothing.
_PROJECTED_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})


@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model a branch last used: `{provider, modelId}`."""

    provider: str
    model_id: str


@dataclass(slots=True)
class SessionContext:
    """What the agent is rebuilt from: messages of the active branch, thinking level and model."""

    messages: list[AgentMessage] = field(default_factory=list)
    thinking_level: str = DEFAULT_THINKING_LEVEL
    model: ModelRef | None = None
    has_thinking_change: bool = False


@dataclass(frozen=True, slots=True)
class StoredSettings:
    """A branch's model and thinking level as the context reads them.

    `model` comes from the latest `model_change` or assistant `message` entry (None when the branch has neither);
    `thinking_level` from the latest `thinking_level_change`, `"off"` when there is none, and `has_thinking_change`
    tells the two cases apart (an opened session restores the level only when the branch changed it).
    """

    thinking_level: str = DEFAULT_THINKING_LEVEL
    has_thinking_change: bool = False
    model: ModelRef | None = None


def stored_settings(path: Sequence[Record]) -> StoredSettings:
    """Model and thinking level of the branch `path` (root first), equal to a forward scan over the full path.

    Walks the path backwards and stops once both are known, parsing only the entries of the three setting kinds it
    meets on the way, so a long branch costs little more than its tail. A compaction does not end the scan: the
    settings of the entries it summarised still hold.
    """
    level: str | None = None
    model: ModelRef | None = None
    for record in reversed(path):
        if level is not None and model is not None:
            break
        if record.type == "thinking_level_change" and level is None:
            entry = record.entry
            if isinstance(entry, ThinkingLevelChangeEntry):
                level = entry.thinking_level
        elif record.type == "model_change" and model is None:
            entry = record.entry
            if isinstance(entry, ModelChangeEntry):
                model = ModelRef(entry.provider, entry.model_id)
        elif record.type == "message" and model is None:
            entry = record.entry
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                model = ModelRef(entry.message.provider, entry.message.model)
    if level is None:
        return StoredSettings(model=model)
    return StoredSettings(thinking_level=level, has_thinking_change=True, model=model)


def project_entry(entry: EntryBase) -> list[AgentMessage]:
    """The context message(s) of one entry; empty for entries that never reach the model."""
    if isinstance(entry, MessageEntry):
        return [entry.agent_message]
    ts = iso_to_ms(entry.timestamp)
    if isinstance(entry, CustomMessageEntry):
        return [
            CustomMessage(
                custom_type=entry.custom_type,
                content=entry.content,
                display=entry.display,
                details=entry.details,
                timestamp=ts,
            )
        ]
    if isinstance(entry, BranchSummaryEntry):
        if not entry.summary:
            return []
        return [BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=ts)]
    if isinstance(entry, CompactionEntry):
        summary: list[AgentMessage] = [
            CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before, timestamp=ts)
        ]
        return summary + list(entry.retained_tail or [])
    return []


def context_records(path: Sequence[Record]) -> list[Record]:
    """The path entries that feed the context, honouring the latest compaction (non-message entries kept).

    An older compaction inside the latest one's kept range (its `firstKeptEntryId` lies before that compaction)
    is left out: its summary and retained tail stand for history the latest summary already covers, so projecting
    it would put that history in the context twice. The reference skips compaction entries there as well.
    """
    compaction_at = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), None)
    if compaction_at is None:
        return list(path)
    compaction = path[compaction_at].entry
    if not isinstance(compaction, CompactionEntry):
        return list(path[compaction_at:])
    kept: list[Record] = []
    if not compaction.retained_tail:
        first_kept = compaction.first_kept_entry_id
        start = next((i for i in range(compaction_at) if path[i].id == first_kept), None)
        if start is not None:
            kept = [record for record in path[start:compaction_at] if record.type != "compaction"]
    return [path[compaction_at], *kept, *path[compaction_at + 1 :]]


def build_context(path: Sequence[Record]) -> SessionContext:
    """Context of the branch `path` (root first)."""
    settings = stored_settings(path)
    projected = [record for record in context_records(path) if record.type in _PROJECTED_TYPES]
    messages: list[AgentMessage] = []
    # Parsing and projecting a long branch allocates only what the context keeps (see `collector_paused`).
    with collector_paused(len(projected) >= PAUSE_AT):
        parse_records(projected)  # one bulk read and parse instead of one read per entry
        for record in projected:
            messages.extend(project_entry(record.entry))
    return SessionContext(
        messages=messages,
        thinking_level=settings.thinking_level,
        model=settings.model,
        has_thinking_change=settings.has_thinking_change,
    )


class LazyContextMessages:
    """`build_context(path).messages` (those `keep` accepts, default all), projected on demand from the newest.

    The projected records are chosen from the index at construction (only the latest compaction is parsed). After
    that, `tail(n)` and `newest_first()` parse and project records backwards from the leaf only as far as they need,
    `step(n)` projects up to `n` more records (for a caller that spreads the work over time), and `materialize()`
    completes the list once and returns it. Every message is projected exactly once, so the tail and the full list
    hold the same objects. The list is a snapshot of `path`: appends to the session afterwards do not change it, and
    the list `materialize()` returns must not be mutated (callers copy it).
    """

    __slots__ = ("_done_from", "_full", "_keep", "_newest", "_records")

    def __init__(self, path: Sequence[Record], keep: Callable[[AgentMessage], bool] | None = None) -> None:
        self._records = [record for record in context_records(path) if record.type in _PROJECTED_TYPES]
        self._keep = keep
        self._done_from = len(self._records)
        """Records from this index on are projected (into `_newest`)."""
        self._newest: list[AgentMessage] = []
        """The messages of the projected records, newest first."""
        self._full: list[AgentMessage] | None = None

    @property
    def record_count(self) -> int:
        """How many records project into the context (each gives at most a few messages)."""
        return len(self._records)

    @property
    def remaining_records(self) -> int:
        """How many records are still to be projected (0 once complete)."""
        return self._done_from

    @property
    def complete(self) -> bool:
        return self._done_from == 0

    def step(self, records: int) -> bool:
        """Project up to `records` more records (backwards from the newest unprojected one); True once complete."""
        stop = self._done_from
        if stop == 0:
            return True
        start = max(0, stop - max(1, records))
        chunk = self._records[start:stop]
        keep = self._keep
        newest = self._newest
        # As in `build_context`: a bulk parse allocates what the context keeps, and no garbage.
        with collector_paused(len(chunk) >= PAUSE_AT):
            parse_records(chunk)
            for record in reversed(chunk):
                projected = project_entry(record.entry)
                for message in reversed(projected):
                    if keep is None or keep(message):
                        newest.append(message)
        self._done_from = start
        return start == 0

    def tail(self, count: int) -> list[AgentMessage]:
        """The newest `count` messages in order (all of them when there are fewer): `materialize()[-count:]`."""
        if count <= 0:
            return []
        while len(self._newest) < count and self._done_from > 0:
            # Grow geometrically: a long run of records projecting to nothing costs few passes.
            self.step(max(count - len(self._newest), len(self._records) - self._done_from, 64))
        return self._newest[count - 1 :: -1] if len(self._newest) >= count else self._newest[::-1]

    def newest_first(self) -> Iterator[AgentMessage]:
        """The messages from the newest to the oldest, projected as the iteration reaches them."""
        index = 0
        chunk = 64
        while True:
            while index < len(self._newest):
                yield self._newest[index]
                index += 1
            if self._done_from == 0:
                return
            self.step(chunk)
            chunk = min(chunk * 2, 4096)

    def materialize(self) -> list[AgentMessage]:
        """The whole list, oldest first (computed once; later calls return the same list)."""
        if self._full is None:
            self.step(self._done_from)
            self._full = self._newest[::-1]
        return self._full


__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "LazyContextMessages",
    "ModelRef",
    "SessionContext",
    "StoredSettings",
    "build_context",
    "context_records",
    "project_entry",
    "stored_settings",
]
