"""Pending area, header and loaded-resources blocks, image placeholders, footer colours when line 2 is cut."""

import urwid
from urwid.testing import render_runs, render_text

from apex_tui.widgets import (
    DetailLevel,
    Footer,
    FooterState,
    HeaderBlock,
    HeaderInfo,
    ImageRef,
    LoadedResourcesBlock,
    PendingArea,
    PendingMessage,
    RenderContext,
    ResourceItem,
    ResourceSection,
    ToolCallBlock,
    UserMessageBlock,
    truncate_markup,
)
from apex_tui.widgets.header import head_truncate


def test_pending_area_lines_and_truncation() -> None:
    area = PendingArea()
    assert area.rows((30,)) == 0
    area.set_messages(
        [PendingMessage("steering", "look at\nthe tests"), PendingMessage("followUp", "then commit everything please")],
        "alt+up",
    )
    assert area.lines == [
        "Steering: look at the tests",
        "Follow-up: then commit everything please",
        "↳ alt+up to edit all queued messages",
    ]
    assert render_text(area, (30,)) == [
        "Steering: look at the tests   ",
        "Follow-up: then commit everyt…",
        "↳ alt+up to edit all queued m…",
    ]
    assert {attr for row in render_runs(area, (30,)) for attr, _ in row} - {None} == {"dim"}
    area.set_queues([], ["y"], "alt+up")
    assert area.lines == ["Follow-up: y", "↳ alt+up to edit all queued messages"]
    area.set_queues([], [], "alt+up")
    assert area.rows((30,)) == 0


def test_head_truncate() -> None:
    assert head_truncate("/home/u/projects/apex", 30) == "/home/u/projects/apex"
    assert head_truncate("/home/u/projects/apex", 10) == "…ects/apex"
    assert len(head_truncate("/home/u/projects/apex", 10)) == 10


def test_header_splash() -> None:
    ctx = RenderContext()
    info = HeaderInfo(
        version="0.5.0",
        model="claude-x",
        cwd="/home/u/a/very/long/path/to/the/project",
        hint="/ for commands, ! for bash",
        shortcuts=(("ctrl+c", "clear / exit"), ("ctrl+o", "expand tools")),
    )
    rows = render_text(HeaderBlock(ctx, info), (50,), strip=True)
    assert rows[1] == "   ╱╲    apex-code v0.5.0"
    assert rows[2] == "  ╱╱╲╲   model  claude-x"
    assert rows[3] == " ╱╱──╲╲  cwd    …/a/very/long/path/to/the/project"
    assert rows[4:] == [" / for commands, ! for bash", " ctrl+c  clear / exit", " ctrl+o  expand tools"]
    narrow = render_text(HeaderBlock(ctx, HeaderInfo(version="1", cwd="/p")), (20,), strip=True)
    assert narrow[1:] == [" apex-code v1", " model  no model", " cwd    /p"]
    assert "claude-x" in HeaderBlock(ctx, info).search_text()


def test_loaded_resources_by_detail_level() -> None:
    ctx = RenderContext()
    block = LoadedResourcesBlock(
        ctx,
        [
            ResourceSection("Context", (ResourceItem("AGENTS.md", "/p/AGENTS.md"),)),
            ResourceSection("Skills", (ResourceItem("pdf", "/s/pdf/SKILL.md"), ResourceItem("web", "/s/web/SKILL.md"))),
            ResourceSection("Prompts"),
            ResourceSection("Skill conflicts", (ResourceItem("pdf defined twice; using /s/pdf"),), problem=True),
        ],
    )
    assert render_text(block, (50,), strip=True)[1:] == [
        " [Context] AGENTS.md",
        " [Skills] pdf, web",
        " [Skill conflicts]",
        "   pdf defined twice; using /s/pdf",
    ]
    runs = render_runs(block, (50,))
    assert runs[3][1] == ("warning", "[Skill conflicts]")
    ctx.detail = DetailLevel.ALL
    assert render_text(block, (50,), strip=True)[1:6] == [
        " [Context]",
        "   AGENTS.md  /p/AGENTS.md",
        " [Skills]",
        "   pdf  /s/pdf/SKILL.md",
        "   web  /s/web/SKILL.md",
    ]
    assert "[Prompts]" not in block.search_text()


def test_image_placeholders_in_user_and_tool_blocks() -> None:
    ctx = RenderContext()
    user = UserMessageBlock(ctx, "what is this?", images=[ImageRef("image/png", 640, 480), ImageRef("image/jpeg")])
    assert render_text(user, (40,), strip=True)[2:5] == [
        " what is this?",
        " [image #1: image/png 640x480]",
        " [image #2: image/jpeg]",
    ]
    only_image = UserMessageBlock(ctx, "", images=[ImageRef("image/gif")])
    assert render_text(only_image, (40,), strip=True)[2] == " [image #1: image/gif]"
    tool = ToolCallBlock(ctx, "read", {"path": "cat.png"})
    tool.set_result("Read image file [image/png]", images=[ImageRef("image/png", 10, 10)])
    assert " [image #1: image/png 10x10]" in render_text(tool, (40,), strip=True)
    assert "[image #1: image/png 10x10]" in tool.search_text()


def test_truncate_markup_keeps_styles() -> None:
    assert truncate_markup(["ab", ("warning", "cdef")], 10) == [["ab", ("warning", "cdef")]]
    assert truncate_markup(["ab", ("warning", "cdef")], 5) == ["ab", ("warning", "cd"), "…"]
    assert truncate_markup([("x", "abc"), "defgh"], 6) == [("x", "abc"), "de", "…"]


def test_footer_line_two_keeps_its_warning_colour_when_cut() -> None:
    state = FooterState(
        cwd="/p",
        input_tokens=12345,
        output_tokens=800,
        cache_read_tokens=40000,
        cache_write_tokens=3000,
        cost=1.5,
        context_percent=95.0,
        context_window=200_000,
        auto_compact=True,
        model_id="m1",
    )
    footer = Footer(state)
    runs = render_runs(footer, (60,))[1]
    assert (urwid.LayeredAttr("error", "dim"), "95.0%!!/200k (auto)") in runs
    cut = render_runs(footer, (45,))[1]
    assert "".join(t for _, t in cut) == "↑12k ↓800 R40k W3.0k $1.500 95.0%!!/200k…  m1"
    assert (urwid.LayeredAttr("error", "dim"), "95.0%!!/200k") in cut  # the kept part of the context figure stays red
    tiny = render_runs(Footer(FooterState(context_percent=80.0, context_window=200_000, model_id="m")), (9,))[1]
    assert tiny[0] == (urwid.LayeredAttr("warning", "dim"), "80.0%!/2")
