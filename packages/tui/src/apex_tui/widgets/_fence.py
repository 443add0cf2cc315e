"""The open fenced code block at the end of a streaming reply, rendered without re-parsing or re-highlighting it.

While a reply streams a long code block, its open markdown chunk is that block and grows every frame. `FenceStream`
remembers, from one markdown-it parse of the chunk, that it ends in an unclosed top-level fence opened in column one;
for such a fence the markdown source after the opening line is the code verbatim, so later frames take the code from
the text directly, highlight it through a `StreamingHighlight` and append the line canvases of committed lines to a
per-width stack. Any text that might close the fence (or that markdown-it would normalise) ends the fast path, and
the renderer parses and highlights the chunk in full again: a complete block is always rendered exactly.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import urwid
from markdown_it.tree import SyntaxTreeNode

from apex_tui.widgets._highlight import StreamingHighlight
from apex_tui.widgets._rows import StackBuilder

_WIDTHS = 4


class FenceLayout:
    """One width's canvases of a `FenceStream`: the blocks above the fence and the committed code lines."""

    def __init__(self, width: int, before: list[urwid.Canvas], generation: int) -> None:
        self.before = before
        self.lines = StackBuilder(width)
        self.generation = generation


class FenceStream:
    """An unclosed fence ending a chunk: `lead` is the chunk through the opening line and its line break.

    `before` are the top-level nodes above the fence; `language` the first word of its info string.
    """

    def __init__(self, lead: str, before: Sequence[SyntaxTreeNode], language: str, char: str) -> None:
        self.lead = lead
        self.before = before
        self.language = language
        self.highlight = StreamingHighlight(language)
        self._char3 = char * 3
        self._checked = ""  # complete code lines already checked not to look like a fence
        self._layouts: OrderedDict[int, FenceLayout] = OrderedDict()
        self.ended = False
        """Set once a complete line that may close the fence (or text markdown-it would normalise) was seen."""

    def code(self, chunk: str) -> str | None:
        """The fence's code in `chunk`, or None unless `chunk` certainly is this fence, still open.

        `chunk` must start with `lead`.
        """
        if not chunk.startswith(self.lead):
            return None
        code = chunk[len(self.lead) :]
        start = len(self._checked) if code.startswith(self._checked) else 0
        if "\r" in code or "\0" in code:
            self.ended = True
            return None
        while True:
            end = code.find("\n", start)
            line = code[start:] if end < 0 else code[start:end]
            if line.lstrip(" \t").startswith(self._char3):
                # May close the fence: markdown-it decides. A complete such line stays, so this fence is over.
                self.ended = end >= 0
                return None
            if end < 0:
                break
            start = end + 1
        self._checked = code[:start]
        return code

    def layout(self, width: int) -> FenceLayout | None:
        """The canvases kept for `width` (None before the first `set_layout` or after the committed lines reset)."""
        layout = self._layouts.get(width)
        if layout is None or layout.generation != self.highlight.generation:
            return None
        self._layouts.move_to_end(width)
        return layout

    def set_layout(self, width: int, layout: FenceLayout) -> None:
        """Keep `layout` for `width`, dropping the least recently used width beyond a few."""
        self._layouts[width] = layout
        self._layouts.move_to_end(width)
        if len(self._layouts) > _WIDTHS:
            self._layouts.popitem(last=False)


def open_fence(chunk: str, tree: SyntaxTreeNode) -> FenceStream | None:
    """A stream for `chunk` (parsed as `tree`) if it ends in an unclosed top-level fence opened in column one."""
    if not tree.children or "\r" in chunk or "\0" in chunk:
        return None
    node = tree.children[-1]
    if node.type != "fence" or node.map is None or not node.markup:
        return None
    start, end = node.map
    lines = chunk.split("\n")
    if end != len(lines) or end - 1 == start or not lines[start].startswith(node.markup):
        return None  # not open at the end, indented, or its opening line may still grow
    char = node.markup[0]
    if end - 1 > start and lines[-1].lstrip(" \t").startswith(char * 3):
        return None  # closed by its last line
    language = node.info.split()[0] if node.info.strip() else ""
    return FenceStream("\n".join(lines[: start + 1]) + "\n", tree.children[:-1], language, char)
