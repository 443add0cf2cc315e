"""Streaming code blocks: incremental highlight and layout give what a full render gives, within bounded caches."""

from collections.abc import Hashable

import urwid

from apex_tui.widgets import AssistantTextBlock, RenderContext
from apex_tui.widgets._highlight import FORCE_COMMIT_LINES, StreamingHighlight, highlight_lines
from apex_tui.widgets.markdown import MarkdownRenderer

_CODE = "\n".join(
    [
        "import os",
        "",
        "def main(limit: int = 3) -> None:",
        '    """Print things.',
        "",
        "    More words about it.",
        '    """',
        "    # a comment",
        '    text = "a string" + str(limit * 2.5)',
        "    return None",
        "",
        "class Thing:",
        "    value = '''multi",
        "    line'''",
        "    other = 42",
    ]
)
_REPLY = "Here is the code:\n\n```python\n" + _CODE + "\n```\n\nDone, *all* of it.\n"


def _rows(canvas: urwid.Canvas | None) -> list[list[tuple[Hashable, bytes]]]:
    assert canvas is not None
    return [[(attr, text) for attr, _, text in row] for row in canvas.content()]


def _stream(renderer: MarkdownRenderer, text: str, step: int, width: int) -> list[urwid.Canvas | None]:
    return [renderer.render(text[:end], width) for end in range(step, len(text) + step, step)]


def test_streamed_block_renders_like_the_complete_text_rendered_at_once() -> None:
    renderer = MarkdownRenderer()
    frames = _stream(renderer, _REPLY, 3, 60)
    assert renderer.open_fences == 1  # one fence streamed (its opening line was parsed once, not per character)
    assert _rows(frames[-1]) == _rows(MarkdownRenderer().render(_REPLY, 60))


def test_every_streaming_frame_of_plain_code_matches_a_full_render() -> None:
    code = "\n".join(f"value_{n} = compute({n}, 'x') + {n}  # step {n}" for n in range(40))
    text = "Intro line\n```python\n" + code
    renderer = MarkdownRenderer()
    for end in range(1, len(text) + 1, 7):
        streamed = renderer.render(text[:end], 50)
        assert _rows(streamed) == _rows(MarkdownRenderer().render(text[:end], 50)), end
    assert renderer.open_fences == 1


def test_streaming_reuses_the_parse_and_commits_highlighted_lines() -> None:
    renderer = MarkdownRenderer()
    code = "\n".join(f"x_{n} = {n}" for n in range(100))
    text = "```python\n" + code
    renderer.render(text[:20], 40)
    parses = renderer.parses
    for end in range(21, len(text) + 1, 5):
        renderer.render(text[:end], 40)
    assert renderer.parses == parses
    fence = next(iter(renderer._fences.values()))
    assert len(fence.highlight.committed) == 99  # every complete line; the open last line is re-lexed


def test_long_stream_is_capped_like_a_full_render() -> None:
    renderer = MarkdownRenderer(max_block_lines=10)
    text = "```\n" + "\n".join(f"line {n}" for n in range(30))
    for end in range(1, len(text) + 1, 11):
        renderer.render(text[:end], 30)
    assert _rows(renderer.render(text, 30)) == _rows(MarkdownRenderer(max_block_lines=10).render(text, 30))


def test_open_multiline_string_is_not_committed_until_closed() -> None:
    highlight = StreamingHighlight("python")
    tail = highlight.update('x = 1\ny = """open\nstill open\n')
    assert len(highlight.committed) == 1  # only "x = 1": lexing may not restart inside the string
    assert len(tail) == 3
    tail = highlight.update('x = 1\ny = """open\nstill open\n"""\nz = 2')
    assert highlight.committed + tail == highlight_lines('x = 1\ny = """open\nstill open\n"""\nz = 2', "python")


def test_without_safe_boundaries_commit_is_forced_after_a_bound() -> None:
    highlight = StreamingHighlight("python")
    code = '"""' + "\n" * (FORCE_COMMIT_LINES + 5)
    tail = highlight.update(code)
    assert len(highlight.committed) == FORCE_COMMIT_LINES + 5
    assert len(tail) == 1


def test_rewritten_text_resets_committed_lines() -> None:
    highlight = StreamingHighlight("python")
    highlight.update("a = 1\nb = 2\n")
    generation = highlight.generation
    tail = highlight.update("c = 3\n")
    assert highlight.generation != generation
    assert highlight.committed + tail == highlight_lines("c = 3\n", "python")


def test_open_fence_cache_is_bounded() -> None:
    renderer = MarkdownRenderer()
    for n in range(20):
        text = f"reply {n}\n```python\nvalue = {n}\n"
        renderer.render(text, 40)
        renderer.render(text + "more = 1", 40)
    assert renderer.open_fences == 4


def test_theme_change_rebuilds_the_block_with_the_same_styled_rows() -> None:
    # Highlighting yields style names, which the screen maps to the active theme's colours when drawing, so a theme
    # change re-renders the block (new canvas) but needs no new highlight: the rows and their style names are equal.
    ctx = RenderContext()
    block = AssistantTextBlock(ctx, "")
    for end in range(0, len(_REPLY) - 20, 9):
        block.append(_REPLY[end : end + 9])
        block.render((60,))
    before = _rows(block.render((60,)))
    builds = block.builds
    ctx.theme_key += 1
    after = _rows(block.render((60,)))
    assert block.builds == builds + 1
    assert after == before
    assert any(attr == "syntaxKeyword" for row in after for attr, _ in row)


_CUT_OFF = (  # the model stopped before the closing fence
    "Partial answer:\n\n```python\n" + 'x = """\n' + "word\n" * (FORCE_COMMIT_LINES + 4) + '"""\ny = 1\n'
)


def test_a_final_render_of_a_cut_off_code_block_is_a_full_highlight() -> None:
    # 260 lines inside a string force the streaming highlight to restart inside it, so after the string closes a
    # streamed frame colours `y = 1` as a string; a final render must give what a full highlight gives.
    renderer = MarkdownRenderer()
    streamed = _stream(renderer, _CUT_OFF, 40, 60)[-1]
    exact = _rows(MarkdownRenderer().render(_CUT_OFF, 60, final=True))
    assert _rows(streamed) != exact  # the case this test is about: the streaming shortcut differs here
    assert _rows(renderer.render(_CUT_OFF, 60, final=True)) == exact


def test_a_finished_reply_block_lays_out_like_a_stored_one() -> None:
    stored = _rows(AssistantTextBlock(RenderContext(), _CUT_OFF, final=True).render((60,)))
    block = AssistantTextBlock(RenderContext())
    for end in range(0, len(_CUT_OFF), 40):
        block.append(_CUT_OFF[end : end + 40])
        block.render((60,))
    assert _rows(block.render((60,))) != stored
    block.finish()
    assert _rows(block.render((60,))) == stored


def test_a_block_created_with_text_streams_incrementally_when_appended_to() -> None:
    ctx = RenderContext()
    block = AssistantTextBlock(ctx, "Streaming reply")  # how a host may start a reply: not final until finished
    block.render((60,))
    code = "\n".join(f"value_{n} = {n}" for n in range(300))
    frames = 0
    for end in range(0, len(code), 20):
        block.append(("\n\n```python\n" if end == 0 else "") + code[end : end + 20])
        block.render((60,))
        frames += 1
    assert frames > 100
    assert ctx.markdown.parses < 10  # the open fence streams; a final block would be parsed again every frame
