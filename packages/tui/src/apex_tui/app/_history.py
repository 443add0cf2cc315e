"""Lazy transcript history: a long session opens with blocks for its newest messages only.

Creating a block object per stored message costs ~30 µs (1.5 s for a 50k-entry session) before anything is on
screen. `LazyHistory` keeps the older messages aside and turns them into blocks a chunk at a time, spliced in above
the loaded ones, when the view nears the top (`load_if_near_top`, called before each frame) or when every block is
needed at once (`load_all`: transcript search, jump to the very top).

Splicing goes through the transcript's public API (`clear` + `extend`, then `jump_to` + `scroll` to put the same
row back on top), so the view does not move on screen while older blocks arrive above it.

A chunk never starts with a tool result: the result belongs to the tool-call block of the assistant message before
it, so a boundary is moved back until the first message of the chunk is not a `ToolResultMessage`.

A session whose context messages are still deferred (`AgentSession.deferred_messages`) opens from its newest messages
alone (`open_deferred`): the older ones are asked for only when the first older chunk is needed, and come from the
same projection, so they are the very objects the agent gets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from apex_ai.types import ToolResultMessage, UserMessage
from apex_coding_agent import LazyContextMessages
from apex_tui.app._feed import TranscriptFeed, user_text
from apex_tui.editor._state import HISTORY_LIMIT
from apex_tui.widgets import Block, RenderContext, TranscriptView

INITIAL_MESSAGES = 200
"""Newest messages turned into blocks when a session opens."""
CHUNK_MESSAGES = 200
"""Older messages turned into blocks per step as the view nears the top."""
NEAR_TOP_BLOCKS = 60
"""The next chunk loads once the top row of the view is within this many blocks of the oldest loaded one."""


def cut_before_results(messages: Sequence[object], index: int) -> int:
    """`index`, moved back past tool results so that `messages[index]` is not one (0 at the latest)."""
    while 0 < index < len(messages) and isinstance(messages[index], ToolResultMessage):
        index -= 1
    return max(0, index)


def prompt_history(newest_first: Iterable[object], limit: int = HISTORY_LIMIT) -> list[str]:
    """The texts of the user messages, newest first, as far back as the editor's history (`limit` entries) needs.

    The editor keeps the newest `limit` texts once blank ones and repeats of the one before are dropped; the walk
    stops one such text past that, so a deferred session projects only the messages the history shows, and the
    editor ends up with the same entries as from every message.
    """
    texts: list[str] = []
    kept = 0
    last: str | None = None
    for message in newest_first:
        if not isinstance(message, UserMessage):
            continue
        text = user_text(message)
        texts.append(text)
        if text.strip() and text != last:
            kept += 1
            last = text
            if kept > limit:
                break
    return texts


class BlockCollector(TranscriptView):
    """What a `TranscriptFeed` appends to while older messages become blocks: a plain list.

    A view's walker announces every append (an urwid signal, an invalidation) and keeps its own list; for 50k
    messages that bookkeeping was a fifth of the time to load them all, and none of it is needed for blocks that
    are spliced into the real view in one step afterwards. The feed only appends and looks at the last block.
    """

    def __init__(self, ctx: RenderContext) -> None:
        super().__init__(ctx)
        self.blocks: list[Block] = []
        """The blocks appended so far, in order."""

    def append(self, block: Block) -> None:
        """Collect `block` (no signal, no redraw)."""
        self.blocks.append(block)

    def extend(self, blocks: Iterable[Block]) -> None:
        """Collect several blocks."""
        self.blocks.extend(blocks)

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def last(self) -> Block | None:
        """The newest collected block."""
        return self.blocks[-1] if self.blocks else None


class LazyHistory:
    """The messages of the open session that have no blocks yet (the oldest ones), and how to add them.

    `head` is the position in the transcript where history starts (after the header and resources blocks); older
    blocks are inserted there.
    """

    def __init__(self, transcript: TranscriptView, ctx: RenderContext, *, chunk: int = CHUNK_MESSAGES) -> None:
        self.transcript = transcript
        self.ctx = ctx
        self.chunk = chunk
        self.head = 0
        self._pending: list[object] = []
        self._deferred: tuple[LazyContextMessages, int] | None = None
        """A deferred context whose messages before its newest `n` are the kept-aside ones, not yet asked for."""

    @property
    def remaining(self) -> int:
        """How many older messages have no blocks yet (asks a deferred context for all of them)."""
        return len(self._older())

    def _older(self) -> list[object]:
        deferred = self._deferred
        if deferred is not None:
            self._deferred = None
            source, newest = deferred
            full = source.materialize()
            self._pending = list(full[: len(full) - newest])
        return self._pending

    def open(self, messages: Sequence[object], *, head: int, initial: int = INITIAL_MESSAGES) -> Sequence[object]:
        """Start over for a session: keep all but the newest `initial` messages aside; returns the newest ones
        (which the caller turns into blocks). Older blocks will be inserted at transcript position `head`."""
        self.head = head
        self._deferred = None
        cut = cut_before_results(messages, max(0, len(messages) - initial))
        self._pending = list(messages[:cut])
        return messages[cut:]

    def open_deferred(
        self, messages: LazyContextMessages, *, head: int, initial: int = INITIAL_MESSAGES
    ) -> Sequence[object]:
        """`open` for a session whose messages are deferred: projects only the newest ones it returns (the same cut
        as `open` over the full list); the older ones are asked for when a chunk of them is first needed."""
        self.head = head
        self._pending = []
        count = initial
        newest = messages.tail(count)
        # The full list's cut moves back past tool results: take one more message while the tail starts with one.
        while len(newest) == count and newest and isinstance(newest[0], ToolResultMessage):
            count += 1
            newest = messages.tail(count)
        more = len(messages.tail(len(newest) + 1)) > len(newest)
        self._deferred = (messages, len(newest)) if more else None
        return newest

    def forget(self) -> None:
        """Drop what was kept aside (the transcript is being rebuilt)."""
        self._pending = []
        self._deferred = None

    def _blocks(self, messages: Sequence[object]) -> list[Block]:
        # A scratch collector and feed: tool results find their calls inside the chunk, and nothing touches the real
        # view until the whole chunk is spliced in at once.
        scratch = BlockCollector(self.ctx)
        feed = TranscriptFeed(scratch, self.ctx)
        for message in messages:
            feed.add_message(message)
        return scratch.blocks

    def load_older(self, count: int | None = None) -> int:
        """Turn up to `count` (default: one chunk) of the newest kept-aside messages into blocks above the loaded
        ones, keeping the same row on top of the view; returns how many blocks were added."""
        pending = self._older()
        if not pending:
            return 0
        start = cut_before_results(pending, max(0, len(pending) - (count or self.chunk)))
        taken = pending[start:]
        del pending[start:]
        return self._splice(self._blocks(taken))

    def load_all(self) -> int:
        """Every kept-aside message becomes a block; returns how many blocks were added."""
        pending = self._older()
        return self.load_older(len(pending)) if pending else 0

    def _splice(self, blocks: list[Block]) -> int:
        view = self.transcript
        if not blocks:
            return 0
        following = view.following
        index, inset = view.top_anchor()
        current = list(view.walker)
        view.clear()
        view.extend([*current[: self.head], *blocks, *current[self.head :]])
        if not following:
            # The same block (now further down) goes back on the top row, as many rows into it as before.
            view.jump_to(index + len(blocks) if index >= self.head else index)
            if inset:
                view.scroll(inset)
        return len(blocks)

    def load_if_near_top(self, near: int = NEAR_TOP_BLOCKS) -> int:
        """Load one chunk when the view is scrolled up to within `near` blocks of the oldest loaded block."""
        view = self.transcript
        if not (self._pending or self._deferred) or view.following or not len(view):
            return 0
        index, _inset = view.top_anchor()
        if index - self.head >= near:
            return 0
        return self.load_older()
