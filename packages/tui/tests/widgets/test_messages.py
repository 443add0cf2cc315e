"""Transcript blocks rendered at fixed widths: text, detail levels, caching."""

import urwid
from urwid.testing import render_runs, render_text

from apex_tui.widgets import (
    AssistantTextBlock,
    BashExecutionBlock,
    CustomMessageBlock,
    DetailLevel,
    NoticeBlock,
    RenderContext,
    SummaryBlock,
    ThinkingBlock,
    ToolCallBlock,
    UserMessageBlock,
    messages,
)

EDIT_ARGS = {"path": "a.py", "edits": [{"oldText": "x = 1\ny = 2", "newText": "x = 1\ny = 3"}]}


def _lines(widget: urwid.Widget, width: int = 40) -> list[str]:
    return render_text(widget, (width,), strip=True)


def _bash(ctx: RenderContext, lines: int) -> ToolCallBlock:
    block = ToolCallBlock(ctx, "bash", {"command": f"seq {lines}"})
    block.set_result("\n".join(str(i) for i in range(1, lines + 1)) + "\n")
    return block


def test_user_message_has_background_and_padding() -> None:
    block = UserMessageBlock(RenderContext(), "hello *there*")
    assert _lines(block, 20) == ["", "", " hello there", ""]
    runs = render_runs(block, (20,))
    assert runs[0] == [(None, " " * 20)]
    assert {attr for attr, _ in runs[1]} == {"user"}
    assert (urwid.LayeredAttr("md.emph", "user"), "there") in runs[2]


def test_assistant_text_streams_and_only_it_rebuilds() -> None:
    ctx = RenderContext()
    done = AssistantTextBlock(ctx, "first reply")
    tail = AssistantTextBlock(ctx)
    for block in (done, tail):
        block.render((30,))
    for delta in ["Hel", "lo ", "**wor", "ld**"]:
        tail.append(delta)
        tail.render((30,))
    assert _lines(tail, 30) == ["", " Hello world"]
    assert done.builds == 1
    assert tail.builds == 5


def test_second_render_at_same_width_uses_the_cache() -> None:
    ctx = RenderContext()
    block = AssistantTextBlock(ctx, "# Title\n\ntext")
    first = _lines(block)
    parses = ctx.markdown.parses
    assert _lines(block) == first
    assert block.rows((40,)) == len(first)
    assert block.builds == 1
    assert ctx.markdown.parses == parses


def test_thinking_visibility_matrix() -> None:
    ctx = RenderContext()
    block = ThinkingBlock(ctx, "pondering")
    shown = ["", " pondering"]
    hidden = ["", " Thinking..."]
    expected = {
        (DetailLevel.OVERVIEW, False): hidden,
        (DetailLevel.DETAILS, False): shown,
        (DetailLevel.ALL, False): shown,
        (DetailLevel.OVERVIEW, True): hidden,
        (DetailLevel.DETAILS, True): hidden,
        (DetailLevel.ALL, True): shown,
    }
    for (level, hide), lines in expected.items():
        ctx.detail, ctx.hide_thinking = level, hide
        assert _lines(block) == lines, (level, hide)
    ctx.detail, ctx.hide_thinking = DetailLevel.DETAILS, False
    assert {attr for attr, text in render_runs(block, (40,))[1] if "pondering" in text} == {"thinking"}


def test_bash_tool_preview_then_all_lines() -> None:
    ctx = RenderContext()
    block = _bash(ctx, 30)
    assert _lines(block, 50) == [
        "",
        "",
        " $ seq 30",
        " ... (25 earlier lines, ctrl+o to expand)",
        " 26",
        " 27",
        " 28",
        " 29",
        " 30",
        "",
    ]
    ctx.detail = DetailLevel.ALL
    lines = _lines(block, 50)
    assert lines[3:5] == [" 1", " 2"]
    assert len(lines) == 2 + 1 + 30 + 1
    ctx.detail = DetailLevel.OVERVIEW
    assert " ... (25 earlier lines, ctrl+o to expand)" in _lines(block, 50)


def test_bash_preview_counts_visual_rows() -> None:
    block = ToolCallBlock(RenderContext(), "bash", {"command": "x"})
    block.set_result("a\nb\n" + "c" * 200)
    assert _lines(block, 60)[3:] == [
        " ... (1 earlier lines, ctrl+o to expand)",
        " b",
        " " + "c" * 58,
        " " + "c" * 58,
        " " + "c" * 58,
        " " + "c" * 26,
        "",
    ]


def test_tool_backgrounds_follow_status() -> None:
    block = ToolCallBlock(RenderContext(), "read", {"path": "src/x.py"})
    assert render_runs(block, (20,))[1] == [("tool.pending", " " * 20)]
    block.set_result("1\n2\n3")
    assert render_runs(block, (20,))[1] == [("tool.success", " " * 20)]
    assert _lines(block, 50) == ["", "", " read src/x.py", " ... (3 more lines, ctrl+o to expand)", ""]
    block.set_result("boom", is_error=True)
    assert render_runs(block, (20,))[1] == [("tool.error", " " * 20)]
    assert _lines(block, 50) == ["", "", " read src/x.py", " boom", ""]


def test_grep_preview_is_15_lines() -> None:
    ctx = RenderContext()
    block = ToolCallBlock(ctx, "grep", {"pattern": "foo", "path": "src"})
    block.set_result("\n".join(f"m{i}" for i in range(40)))
    lines = _lines(block)
    assert lines[2] == " grep foo in src"
    assert lines[3] == " m0"
    assert lines[17] == " m14"
    assert lines[18] == " ... (25 more lines, ctrl+o to expand)"


def test_edit_shows_diff_from_args_then_result_and_counts_at_overview() -> None:
    ctx = RenderContext()
    block = ToolCallBlock(ctx, "edit", EDIT_ARGS)
    assert _lines(block)[2:] == [" edit a.py", "  1 x = 1", " -2 y = 2", " +2 y = 3", ""]
    block.set_result("Successfully replaced 1 block(s) in a.py.", details={"diff": " 9 x = 1\n-10 y = 2\n+10 y = 3"})
    assert _lines(block)[2:] == [" edit a.py", "  9 x = 1", " -10 y = 2", " +10 y = 3", ""]
    runs = render_runs(block, (40,))
    assert (urwid.LayeredAttr("toolDiffRemoved", "tool.success"), "-10 y = 2") in runs[4]
    ctx.detail = DetailLevel.OVERVIEW
    assert _lines(block)[2:] == [" edit a.py", " +1 -1", ""]


def test_edit_with_incomplete_args_shows_title_only() -> None:
    block = ToolCallBlock(RenderContext(), "edit", {"path": "a.py", "edits": [{"oldText": "x"}]})
    assert _lines(block) == ["", "", " edit a.py", ""]


def test_write_previews_content_while_pending() -> None:
    block = ToolCallBlock(RenderContext(), "write", {"path": "n.txt", "content": "\n".join("abcdefghijkl")})
    lines = _lines(block)
    assert lines[3:13] == [f" {c}" for c in "abcdefghij"]
    assert lines[13] == " ... (2 more lines, ctrl+o to expand)"


def test_expand_hint_comes_from_context() -> None:
    ctx = RenderContext(expand_hint="alt+o")
    assert " ... (25 earlier lines, alt+o to expand)" in _lines(_bash(ctx, 30), 50)


def test_tool_output_at_all_is_capped() -> None:
    ctx = RenderContext(detail=DetailLevel.ALL)
    block = ToolCallBlock(ctx, "bash", {"command": "big"})
    block.set_result("\n".join(str(i) for i in range(messages.MAX_OUTPUT_LINES + 500)))
    lines = _lines(block)
    assert lines[3] == " ... (500 earlier lines not shown)"
    assert lines[4] == " 500"
    assert len(lines) == 2 + 1 + 1 + messages.MAX_OUTPUT_LINES + 1


def test_bash_execution_block() -> None:
    ctx = RenderContext()
    block = BashExecutionBlock(ctx, "echo hi", exclude_from_context=True)
    block.append_output("hi\n")
    block.finish(0)
    rule = "─" * 30
    assert _lines(block, 30) == ["", rule, "$ echo hi (not sent to the", "model)", "hi", "exit 0", rule]
    failed = BashExecutionBlock(ctx, "seq 25")
    failed.append_output("\n".join(str(i) for i in range(1, 26)))
    failed.finish(None, cancelled=True, full_output_path="/tmp/out.log")
    lines = _lines(failed, 60)
    assert lines[3] == "... (5 earlier lines, ctrl+o to expand)"
    assert lines[4] == "6"
    assert lines[-3:] == ["cancelled", "Output truncated; full output: /tmp/out.log", "─" * 60]


def test_notices() -> None:
    ctx = RenderContext()
    assert _lines(NoticeBlock(ctx, "error", "boom")) == [" Error: boom"]
    assert _lines(NoticeBlock(ctx, "warning", "careful")) == [" Warning: careful"]
    assert _lines(NoticeBlock.aborted(ctx)) == [" Operation aborted"]
    assert _lines(NoticeBlock.aborted(ctx, 1)) == [" Aborted after 1 retry attempt"]
    assert _lines(NoticeBlock.aborted(ctx, 3)) == [" Aborted after 3 retry attempts"]
    assert render_runs(NoticeBlock(ctx, "error", "x"), (12,))[0][1] == ("error", "Error: x")
    status = NoticeBlock(ctx, "status", "Thinking level: high")
    status.set_text("Thinking level: low")
    assert _lines(status) == [" Thinking level: low"]


def test_custom_message_and_summary() -> None:
    ctx = RenderContext()
    assert _lines(CustomMessageBlock(ctx, "my-ext", "**note**"), 30) == ["", "", " [my-ext]", " note", ""]
    summary = SummaryBlock(ctx, "compaction", "Compacted from 120k tokens", "## Goal\n\nShip it")
    assert _lines(summary, 50) == ["", " [compaction] Compacted from 120k tokens"]
    ctx.detail = DetailLevel.ALL
    assert _lines(summary, 50) == ["", " [compaction] Compacted from 120k tokens", " Goal", "", " Ship it"]


def test_narrow_widths_do_not_break() -> None:
    ctx = RenderContext()
    blocks: list[urwid.Widget] = [
        UserMessageBlock(ctx, "- a\n- b\n\n> q\n\n```py\nx\n```"),
        _bash(ctx, 3),
        ToolCallBlock(ctx, "edit", EDIT_ARGS),
        NoticeBlock(ctx, "error", "e"),
    ]
    for width in (1, 2, 3, 5):
        for block in blocks:
            assert len(render_text(block, (width,))[0]) == width
