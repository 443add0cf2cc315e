"""The transcript's block list: integer positions, O(1) appends, a `modified` signal the view listens to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import urwid

from apex_tui.widgets._block import Block


class TranscriptWalker(urwid.ListWalker[int, Block]):
    """A list walker over blocks with integer positions; appends and focus moves are O(1)."""

    def __init__(self, items: Iterable[Block] = ()) -> None:
        super().__init__()
        self._items: list[Block] = list(items)
        self._focus = max(0, len(self._items) - 1)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, position: int) -> Block:
        return self._items[position]

    def __iter__(self) -> Iterator[Block]:
        return iter(self._items)

    def get_focus(self) -> tuple[Block, int] | tuple[None, None]:
        """The focus block and position, or (None, None) when empty."""
        if not self._items:
            return None, None
        return self._items[self._focus], self._focus

    def set_focus(self, position: int) -> None:
        """Move the focus; emits `modified` only when it changes."""
        if position != self._focus:
            self._focus = position
            self._modified()

    def place_focus(self, position: int) -> None:
        """Move the focus without emitting `modified` (used while rendering, when nothing else changed)."""
        self._focus = position

    def get_next(self, position: int) -> tuple[Block, int] | tuple[None, None]:
        """The block after `position`."""
        if position + 1 >= len(self._items):
            return None, None
        return self._items[position + 1], position + 1

    def get_prev(self, position: int) -> tuple[Block, int] | tuple[None, None]:
        """The block before `position`."""
        if position <= 0:
            return None, None
        return self._items[position - 1], position - 1

    def next_position(self, position: int) -> int:
        """Position after `position`; raises IndexError at the end."""
        if position + 1 >= len(self._items):
            raise IndexError(position)
        return position + 1

    def prev_position(self, position: int) -> int:
        """Position before `position`; raises IndexError at the start."""
        if position <= 0:
            raise IndexError(position)
        return position - 1

    def positions(self, reverse: bool = False) -> Iterable[int]:
        """All positions, optionally last first."""
        return range(len(self._items) - 1, -1, -1) if reverse else range(len(self._items))

    def append(self, block: Block) -> None:
        """Add a block at the end."""
        self._items.append(block)
        self._modified()

    def extend(self, blocks: Iterable[Block]) -> None:
        """Add blocks at the end."""
        self._items.extend(blocks)
        self._modified()

    def remove_at(self, position: int) -> Block:
        """Remove and return the block at `position`."""
        block = self._items.pop(position)
        self._focus = min(self._focus, max(0, len(self._items) - 1))
        self._modified()
        return block

    def clear(self) -> None:
        """Remove every block."""
        self._items.clear()
        self._focus = 0
        self._modified()
