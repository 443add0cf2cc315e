"""Markdown rendering: layout text, style roles, code highlighting, chunk cache."""

from collections.abc import Hashable

import urwid

from apex_tui.widgets.markdown import MarkdownRenderer, split_blocks


def _text(canvas: urwid.Canvas | None) -> list[str]:
    assert canvas is not None
    return [row.decode().rstrip() for row in canvas.text]


def _runs(canvas: urwid.Canvas | None) -> list[list[tuple[Hashable, str]]]:
    assert canvas is not None
    rows: list[list[tuple[Hashable, str]]] = []
    for row in canvas.content():
        merged: list[tuple[Hashable, str]] = []
        for attr, _cs, data in row:
            text = data.decode()
            if merged and merged[-1][0] == attr:
                merged[-1] = (attr, merged[-1][1] + text)
            else:
                merged.append((attr, text))
        rows.append(merged)
    return rows


def _styles_of(canvas: urwid.Canvas | None, needle: str) -> set[Hashable]:
    return {attr for row in _runs(canvas) for attr, text in row if needle in text}


def test_blocks_layout() -> None:
    source = (
        "# Title\n\nSome *em* and **strong** with `code` and [a link](https://x.dev).\n\n"
        "- one\n- two wraps around the narrow width\n\n3. three\n4. four\n\n> quoted\n\n---\n### Deep"
    )
    assert _text(MarkdownRenderer().render(source, 30)) == [
        "Title",
        "",
        "Some em and strong with code",
        "and a link (https://x.dev).",
        "",
        "- one",
        "- two wraps around the narrow",
        "  width",
        "",
        "3. three",
        "4. four",
        "",
        "│ quoted",
        "",
        "──────────────────────────────",
        "",
        "### Deep",
    ]


def test_inline_styles() -> None:
    canvas = MarkdownRenderer().render("# Head\n\n*em* **st** `cd` ~~x~~ [lbl](http://u)", 40)
    assert _styles_of(canvas, "Head") == {"md.heading1"}
    runs = dict(_runs(canvas)[2])
    assert runs["md.emph"] == "em"
    assert runs["md.strong"] == "st"
    assert runs["mdCode"] == "cd"
    assert runs["md.strike"] == "x"
    assert runs["md.link"] == "lbl"
    assert runs["mdLinkUrl"] == " (http://u)"


def test_link_with_url_text_shows_url_once() -> None:
    assert _text(MarkdownRenderer().render("<https://a.b/c>", 40)) == ["https://a.b/c"]


def test_nested_emphasis_layers_styles() -> None:
    canvas = MarkdownRenderer().render("**bold *both***", 40)
    attrs = _styles_of(canvas, "both")
    assert attrs == {urwid.LayeredAttr("md.emph", "md.strong")}


def test_fenced_code_is_highlighted_into_syntax_roles() -> None:
    source = '```python\ndef f(x):\n    return "s" + 1  # note\n```'
    canvas = MarkdownRenderer(code_indent=2).render(source, 40)
    assert _text(canvas) == ["```python", "  def f(x):", '      return "s" + 1  # note', "```"]
    assert _styles_of(canvas, "def") == {"syntaxKeyword"}
    assert _styles_of(canvas, "f") >= {"syntaxFunction"}
    assert _styles_of(canvas, '"s"') == {"syntaxString"}
    assert _styles_of(canvas, "1") >= {"syntaxNumber"}
    assert _styles_of(canvas, "# note") == {"syntaxComment"}
    assert _styles_of(canvas, "```") == {"mdCodeBlockBorder"}


def test_unknown_language_code_uses_code_block_style() -> None:
    canvas = MarkdownRenderer().render("```nosuchlang\nplain words\n```", 30)
    assert _styles_of(canvas, "plain words") == {"mdCodeBlock"}


def test_long_code_lines_wrap_inside_the_indent() -> None:
    canvas = MarkdownRenderer(code_indent=2).render("```\nabcdefghij\n```", 8)
    assert _text(canvas) == ["```", "  abcdef", "  ghij", "```"]


def test_table_aligns_columns_and_falls_back_when_too_wide() -> None:
    source = "| a | long |\n|---|---|\n| 1 | 2 |"
    assert _text(MarkdownRenderer().render(source, 30)) == ["a │ long", "──┼─────", "1 │ 2"]
    assert _text(MarkdownRenderer().render(source, 6)) == ["a │", "long", "1 │ 2"]


def test_quote_body_takes_quote_style() -> None:
    canvas = MarkdownRenderer().render("> said", 20)
    row = _runs(canvas)[0]
    assert row[0] == ("mdQuoteBorder", "│ ")
    assert row[1][0] == "mdQuote"


def test_long_code_block_is_capped() -> None:
    source = "```\n" + "\n".join(f"l{i}" for i in range(50)) + "\n```"
    lines = _text(MarkdownRenderer(max_block_lines=10).render(source, 20))
    assert lines[1:4] == ["  l0", "  l1", "  l2"]
    assert lines[-2:] == ["... (40 more lines)", "```"]
    assert len(lines) == 13


def test_split_blocks_keeps_fences_and_indented_continuations() -> None:
    source = "para one\n\n```\na\n\nb\n```\n\n- item\n\n  continued\n\nlast"
    assert split_blocks(source) == ["para one", "```\na\n\nb\n```", "- item\n\n  continued", "last"]
    assert split_blocks("") == []
    assert split_blocks("\n\n") == []


def test_second_render_at_same_width_does_not_parse() -> None:
    renderer = MarkdownRenderer()
    source = "# A\n\npara\n\n- x\n- y"
    first = _text(renderer.render(source, 40))
    parses = renderer.parses
    assert parses == 3
    assert _text(renderer.render(source, 40)) == first
    assert renderer.parses == parses
    renderer.render(source, 30)
    assert renderer.parses == parses + 3


def test_streaming_reparses_only_the_last_chunk() -> None:
    renderer = MarkdownRenderer()
    text = "\n\n".join(f"paragraph {i}" for i in range(100))
    renderer.render(text, 40)
    before = renderer.parses
    for char in " more words":
        text += char
        renderer.render(text, 40)
    assert renderer.parses == before + len(" more words")


def test_blank_text_renders_nothing() -> None:
    assert MarkdownRenderer().render("  \n", 10) is None
