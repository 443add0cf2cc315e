"""Streaming markdown: incremental chunk splitting and the appended head canvas give what a full render gives."""

from collections.abc import Hashable

import urwid
from hypothesis import given, settings
from hypothesis import strategies as st

from apex_tui.widgets._canvas import blank, filled, stack, text_canvas
from apex_tui.widgets._md_split import ChunkSplitter, split_blocks
from apex_tui.widgets._rows import StackBuilder
from apex_tui.widgets.markdown import MarkdownRenderer


def _reference_fence(line: str) -> str | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for char in "`~":
        if stripped.startswith(char * 3):
            return char * (len(stripped) - len(stripped.lstrip(char)))
    return None


def _reference_split(text: str) -> list[str]:
    """The line-by-line splitter the renderer used before it split incrementally (the oracle)."""
    chunks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    pending_blank = False
    for line in text.split("\n"):
        if fence is not None:
            current.append(line)
            marker = _reference_fence(line)
            if marker and marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip(marker[0] + " "):
                fence = None
            continue
        if not line.strip():
            if current:
                pending_blank = True
                current.append(line)
            continue
        if pending_blank and not line[:1].isspace():
            while current and not current[-1].strip():
                current.pop()
            chunks.append("\n".join(current))
            current = []
        pending_blank = False
        current.append(line)
        fence = _reference_fence(line)
    while current and not current[-1].strip():
        current.pop()
    if current:
        chunks.append("\n".join(current))
    return chunks


_LINES = [
    "",
    "",
    "  ",
    "\t",
    "para text",
    "more *em* words",
    "# Heading",
    "- item",
    "- item two",
    "  - nested item",
    "    - deeper item",
    "  continued",
    "1. first",
    "2. second",
    "   3. nested ordered",
    "> quote",
    "```",
    "```python",
    "````",
    "~~~",
    "   ```",
    "    ```",
    "``` x",
    "def f():",
    "    return 1",
    "| a | b |",
    "|---|---|",
    "---",
]

markdown = st.lists(st.sampled_from(_LINES), max_size=40).map("\n".join) | st.text(
    alphabet=st.sampled_from(list("ab -*#`~>\n\t1.")), max_size=200
)


@st.composite
def pieces(draw: st.DrawFn) -> tuple[str, list[int]]:
    """A markdown source and the cut points that feed it in pieces."""
    text = draw(markdown)
    cuts = draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=25))
    return text, sorted(set(cuts)) + [len(text)]


@settings(max_examples=400, deadline=None)
@given(pieces())
def test_incremental_split_equals_whole_split(case: tuple[str, list[int]]) -> None:
    text, cuts = case
    splitter = ChunkSplitter()
    for cut in cuts:
        prefix = text[:cut]
        finished, last = splitter.split(prefix)
        whole = split_blocks(prefix)
        assert finished + ([last] if last is not None else []) == whole
        assert whole == _reference_split(prefix)


def test_splitter_resumes_and_starts_over_on_a_different_text() -> None:
    splitter = ChunkSplitter()
    assert splitter.split("one\n\ntwo") == (["one"], "two")
    assert splitter.seen == len("one\n\nt")
    assert splitter.matches("one\n\ntwo more")
    assert splitter.split("one\n\ntwo more\n\n```\na\n\nb") == (["one", "two more"], "```\na\n\nb")
    assert not splitter.matches("zero\n\none")
    assert splitter.split("zero\n\none") == (["zero"], "one")
    assert splitter.split("") == ([], None)
    # The character after the blank line decided the split: a text that differs there must not resume.
    assert splitter.split("a\n\nb") == (["a"], "b")
    assert splitter.split("a\n\n  c") == ([], "a\n\n  c")


def _runs(canvas: urwid.Canvas | None) -> list[list[tuple[Hashable, bytes]]]:
    if canvas is None:
        return []
    rows: list[list[tuple[Hashable, bytes]]] = []
    for row in canvas.content():
        merged: list[tuple[Hashable, bytes]] = []
        for attr, _cs, data in row:
            if merged and merged[-1][0] == attr:
                merged[-1] = (attr, merged[-1][1] + data)
            elif data:
                merged.append((attr, data))
        rows.append(merged)
    return rows


@settings(max_examples=60, deadline=None)
@given(pieces(), st.integers(min_value=8, max_value=40))
def test_streamed_render_equals_a_fresh_render(case: tuple[str, list[int]], width: int) -> None:
    text, cuts = case
    streaming = MarkdownRenderer()
    for cut in cuts:
        prefix = text[:cut]
        canvas = streaming.render(prefix, width)
        fresh = MarkdownRenderer().render(prefix, width)
        assert _runs(canvas) == _runs(fresh)
        assert (canvas is None) == (fresh is None)
        if canvas is not None and fresh is not None:
            assert (canvas.rows(), canvas.cols()) == (fresh.rows(), fresh.cols())


def test_a_long_reply_renders_as_a_few_shards_and_parses_only_the_open_chunk() -> None:
    renderer = MarkdownRenderer()
    text = "\n\n".join(f"paragraph {i}\n\n- a\n  - b\n\n```\ncode {i}\n\nmore\n```" for i in range(300))
    canvas = renderer.render(text, 40)
    assert canvas is not None
    # One shard for all finished chunks, whatever their number, so trimming and padding stay cheap.
    assert len(canvas.shards) < 10
    parses = renderer.parses
    for char in "\n\nnew words":
        text += char
        renderer.render(text, 40)
    # "\n\n" re-renders the same open chunk (cached); each later character parses the new open chunk once.
    assert renderer.parses == parses + len("new words")
    assert _runs(renderer.render(text, 40)) == _runs(MarkdownRenderer().render(text, 40))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=8),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=5),
    st.integers(min_value=0, max_value=5),
)
def test_part_stack_reads_like_a_combined_canvas(
    heights: list[int], top: int, keep: int, left: int, right: int
) -> None:
    width = 12
    parts = [
        filled(text_canvas("\n".join(f"p{n}r{r} " + "x" * n for r in range(h)), width), f"s{n}")
        for n, h in enumerate(heights)
    ]
    builder = StackBuilder(width)
    for part in parts:
        builder.append(part)
    leaf = builder.canvas()
    assert leaf is not None
    total = sum(heights)
    top %= total
    keep = min(keep, total - top) or None
    left = min(left, width - 1 - min(right, width - 1))
    right = min(right, width - 1 - left)
    ours = stack([leaf, blank(width)])
    theirs = stack([*parts, blank(width)])
    for canvas in (ours, theirs):
        canvas.trim(top, keep)
        canvas.pad_trim_left_right(-left, -right)
        canvas.fill_attr("bg")
    assert _runs(ours) == _runs(theirs)
    assert ours.rows() == theirs.rows()


def test_stack_builder_snapshots_stay_valid_after_appends() -> None:
    builder = StackBuilder(5)
    assert builder.canvas() is None
    builder.append(text_canvas("one", 5))
    first = builder.canvas()
    assert first is builder.canvas()
    builder.append(text_canvas("two", 5))
    assert first is not None
    assert [row.decode().rstrip() for row in first.text] == ["one"]
    second = builder.canvas()
    assert second is not None
    assert [row.decode().rstrip() for row in second.text] == ["one", "two"]
