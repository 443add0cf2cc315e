"""Shared render state for transcript blocks, and the cached block base class."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

import urwid

from apex_tui.widgets._canvas import Size, blank, flow_width, stack
from apex_tui.widgets.markdown import MarkdownRenderer


class DetailLevel(StrEnum):
    """Conversation detail; `app.tools.expand` cycles overview → details → all → overview."""

    OVERVIEW = "overview"
    DETAILS = "details"
    ALL = "all"

    def next(self) -> DetailLevel:
        """The level the detail cycle moves to from this one."""
        order = (DetailLevel.OVERVIEW, DetailLevel.DETAILS, DetailLevel.ALL)
        return order[(order.index(self) + 1) % len(order)]


@dataclass
class RenderContext:
    """UI state every block renders with, shared by reference between a transcript and its blocks.

    Changing a field changes `key`, which is part of every block's cache key; the transcript's `refresh()` then
    redraws what is on screen. `theme_key` is the active `Theme.key` (styles are names, so it only forces redraws).
    """

    detail: DetailLevel = DetailLevel.DETAILS
    hide_thinking: bool = False
    theme_key: int = 0
    expand_hint: str = "ctrl+o"
    output_pad: int = 1
    thinking_label: str = "Thinking..."
    markdown: MarkdownRenderer = field(default_factory=MarkdownRenderer)

    @property
    def key(self) -> Hashable:
        """Everything besides width and content that changes how a block looks."""
        return (
            self.detail,
            self.hide_thinking,
            self.theme_key,
            self.expand_hint,
            self.output_pad,
            self.thinking_label,
            self.markdown.hyperlinks,
        )

    def thinking_visible(self) -> bool:
        """Thinking text is shown at `all`, and at `details` unless `hideThinkingBlock` is set."""
        return self.detail is DetailLevel.ALL or (self.detail is DetailLevel.DETAILS and not self.hide_thinking)


class Block(urwid.Widget):
    """A transcript item: a flow widget whose canvas is built once per (width, context key) and kept.

    Subclasses implement `_build(width)`. Content setters call `_changed()`, which drops this block's canvases
    (and, through urwid's canvas dependencies, the transcript frame holding them) and nothing else.
    `builds` counts `_build` calls, `renders` counts renders urwid's own canvas cache did not answer.
    """

    _sizing = frozenset([urwid.Sizing.FLOW])
    _selectable = False
    ignore_focus = True
    # rows() answers from our cache, which knows about the context key; urwid's rows cache does not.
    no_cache: ClassVar[list[str]] = ["rows"]

    gap: ClassVar[int] = 1
    """Blank rows drawn above the block, separating it from the previous item."""

    is_prompt: ClassVar[bool] = False
    """Whether prompt jumps (`tui.altScreen.previousPrompt`/`nextPrompt`) stop at this block."""

    _MAX_CACHED: ClassVar[int] = 3

    def __init__(self, ctx: RenderContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._canvases: dict[tuple[int, Hashable], urwid.CompositeCanvas] = {}
        self.builds = 0
        self.renders = 0
        self.version = 0
        """Bumped by every content change (search caches key on it)."""
        self._folded: tuple[int, str] | None = None

    def rows(self, size: tuple[int], focus: bool = False) -> int:
        """Rows at `size[0]` columns (built and cached on first use)."""
        return self._canvas(size[0]).rows()

    def render(self, size: Size, focus: bool = False) -> urwid.CompositeCanvas:
        """The cached canvas for this width and context, wrapped so urwid can finalize its own copy."""
        self.renders += 1
        canvas = urwid.CompositeCanvas(self._canvas(flow_width(size)))
        # Built from text layouts, not child widgets: tell urwid's cache there is nothing to depend on, instead of
        # letting it walk every part of a long message on each store.
        canvas.depends_on = []
        return canvas

    def _canvas(self, width: int) -> urwid.CompositeCanvas:
        key = (width, self.ctx.key)
        canvas = self._canvases.get(key)
        if canvas is None:
            self.builds += 1
            body = self._build(width)
            canvas = stack([blank(width, self.gap), body]) if self.gap else urwid.CompositeCanvas(body)
            if len(self._canvases) >= self._MAX_CACHED:
                del self._canvases[next(iter(self._canvases))]
            self._canvases[key] = canvas
        return canvas

    def _build(self, width: int) -> urwid.Canvas:
        raise NotImplementedError

    def _changed(self) -> None:
        self.version += 1
        self._canvases.clear()
        self._invalidate()

    def search_text(self) -> str:
        """The plain text transcript search looks in: the block's content, independent of width and detail level.

        Matching this text instead of laid-out rows lets a search cover 50k blocks without building their canvases.
        """
        return ""

    def folded_search_text(self) -> str:
        """`search_text()` lower-cased, cached until the content changes."""
        if self._folded is None or self._folded[0] != self.version:
            self._folded = (self.version, self.search_text().lower())
        return self._folded[1]

    def refresh(self) -> None:
        """Drop urwid's cached canvas of this block so the next frame asks it again (after a context change)."""
        self._invalidate()
