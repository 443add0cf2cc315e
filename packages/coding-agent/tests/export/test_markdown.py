"""The Markdown subset of the HTML export: what it formats, and that it never lets markup through."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from apex_coding_agent.export._markdown import render_inline, render_markdown

ALLOWED = {"p", "br", "pre", "code", "strong", "em", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6"}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _tags(fragment: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(fragment)
    return parser.tags


def test_paragraphs_and_line_breaks() -> None:
    assert render_markdown("one\ntwo\n\nthree") == "<p>one<br>\ntwo</p>\n<p>three</p>"


def test_code_fence_keeps_text_literally_and_sanitizes_the_language() -> None:
    html = render_markdown('before\n```py"><script>\nx = **1** < 2\n```\nafter')
    assert html == ('<p>before</p>\n<pre><code class="language-pyscript">x = **1** &lt; 2</code></pre>\n<p>after</p>')


def test_unclosed_fence_runs_to_the_end() -> None:
    assert render_markdown("~~~\na\n\nb") == "<pre><code>a\n\nb</code></pre>"


def test_inline_code_bold_and_italic() -> None:
    assert render_inline("use `a*b*c` and **bold** and *it* and _us_ but snake_case_name") == (
        "use <code>a*b*c</code> and <strong>bold</strong> and <em>it</em> and <em>us</em> but snake_case_name"
    )


def test_headings_and_lists() -> None:
    html = render_markdown("# Title\n- one\n- **two**\n  continued\n1. first\n2. second")
    assert html == (
        "<h1>Title</h1>\n<ul><li>one</li><li><strong>two</strong> continued</li></ul>\n"
        "<ol><li>first</li><li>second</li></ol>"
    )


def test_links_and_raw_html_stay_text() -> None:
    html = render_markdown('[x](javascript:alert(1)) <b onclick="y">z</b> ![i](http://e/x.png)')
    assert _tags(html) == [("p", [])]
    assert "&lt;b onclick=&quot;y&quot;&gt;" in html


@given(st.text(alphabet=st.sampled_from(list("<>&\"'`*_#-~ \nabc/=123[]()!")), max_size=80))
def test_only_known_tags_without_attributes_except_code_language(text: str) -> None:
    for tag, attrs in _tags(render_markdown(text)):
        assert tag in ALLOWED
        assert all(name == "class" and tag == "code" for name, _ in attrs)
