"""Markdown to urwid canvases (markdown-it-py), styled with theme style names.

The source is first split at blank lines into top-level chunks (`split_blocks`); each chunk is parsed and laid out
on its own and cached by (chunk text, width). While a reply streams only its last chunk changes: the renderer keeps
an incremental splitter per recent text, so a delta re-scans and re-parses the open chunk only, and the finished
chunks above it are one cached canvas that grows by appending (`StackBuilder`). A frame's cost does not grow with the
reply's length, apart from one memory compare of the finished prefix. An open chunk that ends in an unclosed code block
(a long block streaming) is not re-parsed either: `_fence.FenceStream` takes its code from the text, highlights new
lines only and appends their layout; the block is parsed and highlighted in full again once it closes. Rendered output names styles only (`mdHeading`, `syntaxKeyword`, ...),
never colours, so a theme change needs no re-render.

Decision: a soft line break stays a line break (model replies use single newlines as intended breaks). Links show
their URL in `mdLinkUrl` after the label when the two differ. With `hyperlinks` on (the terminal supports OSC 8) the
label alone is drawn, in a `LinkStyle` that carries the URL; the screen turns it into an OSC 8 hyperlink.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import urwid
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from urwid.str_util import calc_width

from apex_tui.widgets._canvas import Markup, blank, filled, pad_sides, plain_text, stack, text_canvas, with_prefix
from apex_tui.widgets._fence import FenceLayout, FenceStream, open_fence
from apex_tui.widgets._highlight import Line, highlight_lines, line_markup
from apex_tui.widgets._md_split import ChunkSplitter, split_blocks
from apex_tui.widgets._rows import PartStack, StackBuilder
from apex_tui.widgets.hyperlink import LinkStyle

DEFAULT_MAX_BLOCK_LINES = 2000
"""Rows one markdown block (code block, paragraph) renders before the rest is summarised in one line."""

_STREAMS = 16
"""Texts whose finished chunks the renderer remembers (the streaming reply plus a few recently built messages)."""
_WIDTHS_PER_STREAM = 4
_FENCES = 4
"""Open code blocks the renderer streams incrementally (one per streaming reply or thinking text, in practice)."""

__all__ = ["DEFAULT_MAX_BLOCK_LINES", "MarkdownRenderer", "split_blocks"]


class _Stream:
    """One growing text: its incremental splitter and, per width, the finished chunks stacked so far."""

    def __init__(self) -> None:
        self.splitter = ChunkSplitter()
        self.heads: OrderedDict[int, StackBuilder] = OrderedDict()
        self.placed: dict[int, int] = {}  # width -> finished chunks already considered for that head


class MarkdownRenderer:
    """Renders markdown to canvases with an LRU cache of laid-out chunks.

    `parses` counts markdown-it parses (one per chunk not found in the cache), for cache tests and benchmarks.
    """

    def __init__(
        self,
        *,
        code_indent: int = 2,
        max_block_lines: int = DEFAULT_MAX_BLOCK_LINES,
        cache_size: int = 4096,
        hyperlinks: bool = False,
    ) -> None:
        self._md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
        self.code_indent = code_indent
        self.max_block_lines = max_block_lines
        self._cache_size = cache_size
        self._cache: OrderedDict[tuple[str, int], urwid.CompositeCanvas] = OrderedDict()
        self._streams: list[_Stream] = []  # most recently used last
        self._fences: OrderedDict[str, FenceStream] = OrderedDict()  # by lead, most recently used last
        self.parses = 0
        self._hyperlinks = hyperlinks

    @property
    def hyperlinks(self) -> bool:
        """Whether links are drawn as OSC 8 hyperlinks (label only) instead of `label (url)`."""
        return self._hyperlinks

    def set_hyperlinks(self, enabled: bool) -> None:
        """Switch OSC 8 links on or off; cached layouts are dropped (blocks see it through `RenderContext.key`)."""
        if enabled != self._hyperlinks:
            self._hyperlinks = enabled
            self._cache.clear()
            self._streams.clear()
            self._fences.clear()

    @property
    def open_fences(self) -> int:
        """Open code blocks remembered for incremental streaming (bounded)."""
        return len(self._fences)

    def render(self, text: str, width: int, *, final: bool = False) -> urwid.CompositeCanvas | None:
        """`text` laid out at `width` columns, top-level blocks separated by a blank row; None for blank text.

        When `text` extends a recently rendered text, only its open (last) chunk is scanned and laid out; the
        finished chunks come from a head canvas that is extended by the chunks finished since. `final` says the
        text will not grow: a code block it leaves open (a reply cut off mid-block) is then highlighted in full
        rather than with the incremental highlighting of a block still streaming.
        """
        stream = self._stream(text)
        finished, last = stream.splitter.split(text)
        self._remember(stream)
        head = self._head(stream, finished, width)
        tail = self._open_chunk(last, width, final=final) if last is not None else None
        if head is None or tail is None:
            return urwid.CompositeCanvas(head) if head is not None else tail
        return stack([head, blank(width), tail])

    def _stream(self, text: str) -> _Stream:
        """The remembered stream with the longest finished prefix that `text` extends, else a new unregistered one."""
        best: _Stream | None = None
        for stream in self._streams:
            if (best is None or stream.splitter.seen > best.splitter.seen) and stream.splitter.matches(text):
                best = stream
        return best or _Stream()

    def _remember(self, stream: _Stream) -> None:
        """Keep `stream` as the most recently used; streams with nothing finished are not worth a slot."""
        if stream in self._streams:
            self._streams.remove(stream)
        if stream.splitter.seen:
            self._streams.append(stream)
            if len(self._streams) > _STREAMS:
                del self._streams[0]

    def _head(self, stream: _Stream, finished: list[str], width: int) -> PartStack | None:
        """The finished chunks stacked with blank rows between them; appends the chunks finished since last time."""
        builder = stream.heads.get(width)
        if builder is None:
            builder = stream.heads[width] = StackBuilder(width)
            stream.placed[width] = 0
            if len(stream.heads) > _WIDTHS_PER_STREAM:
                dropped, _ = stream.heads.popitem(last=False)
                del stream.placed[dropped]
        else:
            stream.heads.move_to_end(width)
        for chunk in finished[stream.placed[width] :]:
            canvas = self._chunk(chunk, width)
            if canvas is None:
                continue
            if len(builder):
                builder.append(blank(width))
            builder.append(canvas)
        stream.placed[width] = len(finished)
        return builder.canvas()

    def _open_chunk(self, chunk: str, width: int, *, final: bool = False) -> urwid.CompositeCanvas | None:
        """The last chunk: an open code block ending it streams through a `FenceStream`, anything else is parsed
        (a `final` chunk always is)."""
        if final:
            return self._chunk(chunk, width)
        for lead, fence in reversed(self._fences.items()):
            if chunk.startswith(lead):
                code = fence.code(chunk)
                if code is not None:
                    self._fences.move_to_end(lead)
                    return self._fence_canvas(fence, code, width)
                if fence.ended:
                    del self._fences[lead]
                break
        return self._chunk(chunk, width, open_chunk=True)

    def _chunk(self, chunk: str, width: int, *, open_chunk: bool = False) -> urwid.CompositeCanvas | None:
        key = (chunk, width)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        self.parses += 1
        tree = SyntaxTreeNode(self._md.parse(chunk))
        if open_chunk:
            fence = open_fence(chunk, tree)
            if fence is not None:
                self._fences[fence.lead] = fence
                self._fences.move_to_end(fence.lead)
                if len(self._fences) > _FENCES:
                    self._fences.popitem(last=False)
        blocks = self._blocks(tree.children, width, tight=False)
        canvas = stack(blocks) if blocks else None
        if canvas is not None:
            self._cache[key] = canvas
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return canvas

    # -- blocks -------------------------------------------------------------------------------------------------

    def _blocks(self, nodes: Sequence[SyntaxTreeNode], width: int, *, tight: bool) -> list[urwid.Canvas]:
        out: list[urwid.Canvas] = []
        for node in nodes:
            canvas = self._block(node, width)
            if canvas is None:
                continue
            if out and not tight:
                out.append(blank(width))
            out.append(canvas)
        return out

    def _block(self, node: SyntaxTreeNode, width: int) -> urwid.Canvas | None:
        kind = node.type
        if kind == "paragraph":
            return self._capped(text_canvas(self._inline_of(node), width), width)
        if kind == "heading":
            level = int(node.tag[1:])
            inner = self._inline_of(node)
            if level == 1:
                return text_canvas(("md.heading1", inner), width)
            prefix = "#" * level + " " if level >= 3 else ""
            return text_canvas(("md.heading", [prefix, inner]), width)
        if kind in ("bullet_list", "ordered_list"):
            return self._list(node, width)
        if kind == "blockquote":
            if width <= 2:
                return stack(self._blocks(node.children, width, tight=False) or [blank(width)])
            quoted = stack(self._blocks(node.children, width - 2, tight=False) or [blank(width - 2)])
            border = ("mdQuoteBorder", "│ ")
            return with_prefix(filled(quoted, "mdQuote"), border, border, 2, total_width=width)
        if kind in ("fence", "code_block"):
            language = node.info.split()[0] if node.info.strip() else ""
            return self._code(node.content, language, width, fenced=kind == "fence")
        if kind == "hr":
            return text_canvas(("mdHr", "─" * width), width, wrap="clip")
        if kind == "table":
            return self._table(node, width)
        if kind == "html_block":
            return text_canvas(("muted", node.content.rstrip("\n")), width)
        if node.children:
            return stack(self._blocks(node.children, width, tight=False) or [blank(width)])
        return text_canvas(node.content, width) if node.content else None

    def _capped(self, canvas: urwid.CompositeCanvas, width: int) -> urwid.CompositeCanvas:
        extra = canvas.rows() - self.max_block_lines
        if extra <= 0:
            return canvas
        canvas.trim_end(extra)
        return stack([canvas, text_canvas(("muted", f"... ({extra} more lines)"), width)])

    def _list(self, node: SyntaxTreeNode, width: int) -> urwid.Canvas:
        items = [item for item in node.children if item.type == "list_item"]
        ordered = node.type == "ordered_list"
        markers = [f"{item.info or index + 1}. " if ordered else "- " for index, item in enumerate(items)]
        marker_width = max((calc_width(m, 0, len(m)) for m in markers), default=2)
        tight = all(child.hidden for item in items for child in item.children if child.type == "paragraph")
        content_width = width - marker_width
        out: list[urwid.Canvas] = []
        for item, marker in zip(items, markers, strict=True):
            if content_width < 1:
                out.append(text_canvas([("mdListBullet", marker.strip()), " "], width))
                continue
            body = stack(self._blocks(item.children, content_width, tight=tight) or [blank(content_width)])
            if out and not tight:
                out.append(blank(width))
            out.append(
                with_prefix(body, ("mdListBullet", marker.rjust(marker_width)), "", marker_width, total_width=width)
            )
        return stack(out) if out else blank(width)

    def _code(self, code: str, language: str, width: int, *, fenced: bool) -> urwid.Canvas:
        lines = highlight_lines(code.removesuffix("\n"), language)
        hidden = len(lines) - self.max_block_lines
        if hidden > 0:
            lines = lines[: self.max_block_lines]
        markup: list[Markup] = []
        for index, runs in enumerate(lines):
            if index:
                markup.append("\n")
            markup.append(line_markup(runs))
        indent = self._indent(width)
        body = pad_sides(text_canvas(markup, width - indent, wrap="any"), indent, 0)
        return self._code_frame([body], language, hidden, width, fenced=fenced)

    def _indent(self, width: int) -> int:
        return self.code_indent if width > self.code_indent + 1 else 0

    def _code_frame(
        self, body: list[urwid.Canvas], language: str, hidden: int, width: int, *, fenced: bool
    ) -> urwid.CompositeCanvas:
        """`body` (the code rows) between the fence borders, with the summary of `hidden` lines."""
        parts: list[urwid.Canvas] = []
        if fenced:
            parts.append(text_canvas(("mdCodeBlockBorder", "```" + language), width, wrap="clip"))
        parts.extend(body)
        if hidden > 0:
            parts.append(text_canvas(("muted", f"... ({hidden} more lines)"), width))
        if fenced:
            parts.append(text_canvas(("mdCodeBlockBorder", "```"), width, wrap="clip"))
        return stack(parts)

    def _code_line(self, runs: Line, width: int) -> urwid.CompositeCanvas:
        """One code line laid out as `_code` lays it out inside a block (the rows of a block are its lines')."""
        indent = self._indent(width)
        return pad_sides(text_canvas(line_markup(runs), width - indent, wrap="any"), indent, 0)

    def _fence_canvas(self, fence: FenceStream, code: str, width: int) -> urwid.CompositeCanvas:
        """The chunk ending in the open `fence` whose code is now `code`: new committed lines are laid out once."""
        tail = fence.highlight.update(code)
        committed = fence.highlight.committed
        layout = fence.layout(width)
        if layout is None:
            layout = FenceLayout(width, self._blocks(fence.before, width, tight=False), fence.highlight.generation)
            fence.set_layout(width, layout)
        cap = self.max_block_lines
        for runs in committed[len(layout.lines) : cap]:
            layout.lines.append(self._code_line(runs, width))
        body: list[urwid.Canvas] = []
        head = layout.lines.canvas()
        if head is not None:
            body.append(head)
        body.extend(self._code_line(runs, width) for runs in tail[: max(0, cap - len(committed))])
        hidden = len(committed) + len(tail) - cap
        code_canvas = self._code_frame(body, fence.language, hidden, width, fenced=True)
        return stack([*layout.before, blank(width), code_canvas]) if layout.before else code_canvas

    def _table(self, node: SyntaxTreeNode, width: int) -> urwid.Canvas:
        rows: list[tuple[bool, list[Markup]]] = []
        for section in node.children:
            for row in section.children:
                cells: list[Markup] = [self._inline_of(cell) for cell in row.children]
                rows.append((section.type == "thead", cells))
        if not rows:
            return blank(width)
        columns = max(len(cells) for _, cells in rows)
        widths = [0] * columns
        for _, cells in rows:
            for index, cell in enumerate(cells):
                widths[index] = max(widths[index], _width_of(cell))
        separator = " │ "
        total = sum(widths) + len(separator) * (columns - 1)
        out: list[urwid.Canvas] = []
        for is_header, cells in rows:
            if total > width:
                # Too wide to align: each row becomes one wrapped line of cells.
                joined: list[Markup] = []
                for index, cell in enumerate(cells):
                    if index:
                        joined.append(("mdHr", separator))
                    joined.append(("md.strong", cell) if is_header else cell)
                out.append(text_canvas(joined, width))
                continue
            line: list[Markup] = []
            for index in range(columns):
                cell = cells[index] if index < len(cells) else ""
                if index:
                    line.append(("mdHr", separator))
                line.append(("md.strong", cell) if is_header else cell)
                line.append(" " * (widths[index] - _width_of(cell)))
            out.append(text_canvas(line, width, wrap="clip"))
            if is_header:
                rule = "─┼─".join("─" * w for w in widths)
                out.append(text_canvas(("mdHr", rule), width, wrap="clip"))
        return stack(out)

    # -- inline -------------------------------------------------------------------------------------------------

    def _inline_of(self, node: SyntaxTreeNode) -> list[Markup]:
        out: list[Markup] = []
        for child in node.children:
            if child.type == "inline":
                out.extend(self._inline(child))
        return out

    def _inline(self, node: SyntaxTreeNode) -> list[Markup]:
        out: list[Markup] = []
        for child in node.children:
            kind = child.type
            if kind in ("text", "html_inline"):
                out.append(child.content)
            elif kind in ("softbreak", "hardbreak"):
                out.append("\n")
            elif kind == "code_inline":
                out.append(("mdCode", child.content))
            elif kind == "em":
                out.append(("md.emph", self._inline(child)))
            elif kind == "strong":
                out.append(("md.strong", self._inline(child)))
            elif kind == "s":
                out.append(("md.strike", self._inline(child)))
            elif kind == "link":
                label = self._inline(child)
                href = str(child.attrs.get("href", ""))
                if href and self._hyperlinks:
                    out.append((LinkStyle("md.link", href), label))
                    continue
                out.append(("md.link", label))
                if href and _plain(label) != href and _plain(label) != href.removeprefix("mailto:"):
                    out.append(("mdLinkUrl", f" ({href})"))
            elif kind == "image":
                alt = _plain(self._inline(child)) or str(child.attrs.get("src", ""))
                out.append(("mdLinkUrl", f"[image: {alt}]"))
            else:
                out.extend(self._inline(child) if child.children else [child.content])
        return out


def _plain(markup: Markup) -> str:
    return plain_text(markup)


def _width_of(markup: Markup) -> int:
    text = _plain(markup)
    return max((calc_width(line, 0, len(line)) for line in text.split("\n")), default=0)
