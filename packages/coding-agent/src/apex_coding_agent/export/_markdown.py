"""A small, safe Markdown subset for the HTML export.

Every piece of source text is HTML-escaped *before* any markup is added, so the only tags in the output are the
ones this module writes: fenced code blocks, headings, bullet lists, paragraphs with line breaks, inline code, bold
and italic. Links, raw HTML and images in Markdown are shown as their (escaped) text. Nothing here evaluates URLs,
so no `href`/`src` attribute is ever produced from model text.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s{0,3}\d{1,9}[.)]\s+(.*)$")
_LANG_SAFE = re.compile(r"[^A-Za-z0-9_+#.-]")
# Applied to already-escaped text; `&`, `<`, `>` and quotes cannot appear unescaped here.
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"
)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def escape(text: str) -> str:
    """HTML-escape text for element content and double-quoted attribute values."""
    return html.escape(text, quote=True)


def _emphasis(escaped: str) -> str:
    escaped = _BOLD.sub(lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", escaped)
    return _ITALIC.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", escaped)


def render_inline(text: str) -> str:
    """Inline Markdown of one block of text: code spans (taken literally), then bold and italic."""
    out: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_emphasis(escape(text[pos : match.start()])))
        out.append(f"<code>{escape(match.group(2).strip() or match.group(2))}</code>")
        pos = match.end()
    out.append(_emphasis(escape(text[pos:])))
    return "".join(out)


def _code_block(lines: list[str], lang: str) -> str:
    safe_lang = _LANG_SAFE.sub("", lang)[:40]
    cls = f' class="language-{safe_lang}"' if safe_lang else ""
    return f"<pre><code{cls}>{escape(chr(10).join(lines))}</code></pre>"


def _flush_paragraph(lines: list[str], out: list[str]) -> None:
    if lines:
        out.append("<p>" + "<br>\n".join(render_inline(line) for line in lines) + "</p>")
        lines.clear()


def _flush_list(items: list[str], ordered: bool, out: list[str]) -> None:
    if items:
        tag = "ol" if ordered else "ul"
        out.append(f"<{tag}>" + "".join(f"<li>{render_inline(item)}</li>" for item in items) + f"</{tag}>")
        items.clear()


def render_markdown(text: str) -> str:
    """HTML for `text` in the supported Markdown subset (see the module docstring). Never raises."""
    out: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    ordered = False
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            _flush_paragraph(paragraph, out)
            _flush_list(items, ordered, out)
            marker = fence.group(1)
            body: list[str] = []
            i += 1
            # An unclosed fence runs to the end of the text, as in CommonMark.
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            out.append(_code_block(body, fence.group(2)))
            i += 1
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        numbered = _ORDERED.match(line)
        if heading:
            _flush_paragraph(paragraph, out)
            _flush_list(items, ordered, out)
            level = len(heading.group(1))
            out.append(f"<h{level}>{render_inline(heading.group(2))}</h{level}>")
        elif bullet or numbered:
            _flush_paragraph(paragraph, out)
            is_numbered = bullet is None
            if items and is_numbered != ordered:
                _flush_list(items, ordered, out)
            ordered = is_numbered
            found = bullet or numbered
            assert found is not None
            items.append(found.group(1))
        elif not line.strip():
            _flush_paragraph(paragraph, out)
            _flush_list(items, ordered, out)
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + line.strip()  # a continuation line of the last list item
        else:
            _flush_list(items, ordered, out)
            paragraph.append(line)
        i += 1
    _flush_paragraph(paragraph, out)
    _flush_list(items, ordered, out)
    return "\n".join(out)


__all__ = ["escape", "render_inline", "render_markdown"]
