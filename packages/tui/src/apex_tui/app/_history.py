"""Lazy transcript history: a long session opens with blocks for its newest messages only.

Creating a block object per stored message costs ~30 µs (1.5 s for a 50k-entry session) before anything is on
screen. `LazyHistory` keeps the older messages aside and turns them into blocks a chunk at a time, spliced in above
the loaded ones, when the view nears the top (`load_if_near_top`, called before each frame) or when every block is
needed at once (`load_all`: transcript search, jump to the very top).

Splicing goes through the transcript's public API (`clear` + `extend`, then `jump_to` + `scroll` to put the same
row back on top), so the view does not move on screen while older blocks arrive above it.

A chunk never starts with a tool result: the result belongs to the tool-call block of the assistant message before
it, so a boundary is moved back until the first message of the chunk is not a `ToolResultMessage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from apex_ai.types import ToolResultMessage
from apex_tui.app._feed import TranscriptFeed
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

    @property
    def remaining(self) -> int:
        """How many older messages have no blocks yet."""
        return len(self._pending)

    def open(self, messages: Sequence[object], *, head: int, initial: int = INITIAL_MESSAGES) -> Sequence[object]:
        """Start over for a session: keep all but the newest `initial` messages aside; returns the newest ones
        (which the caller turns into blocks). Older blocks will be inserted at transcript position `head`."""
        self.head = head
        cut = cut_before_results(messages, max(0, len(messages) - initial))
        self._pending = list(messages[:cut])
        return messages[cut:]

    def forget(self) -> None:
        """Drop what was kept aside (the transcript is being rebuilt)."""
        self._pending = []

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
        if not self._pending:
            return 0
        start = cut_before_results(self._pending, max(0, len(self._pending) - (count or self.chunk)))
        taken = self._pending[start:]
        del self._pending[start:]
        return self._splice(self._blocks(taken))

    def load_all(self) -> int:
        """Every kept-aside message becomes a block; returns how many blocks were added."""
        return self.load_older(len(self._pending)) if self._pending else 0

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
        if not self._pending or view.following or not len(view):
            return 0
        index, _inset = view.top_anchor()
        if index - self.head >= near:
            return 0
        return self.load_older()
