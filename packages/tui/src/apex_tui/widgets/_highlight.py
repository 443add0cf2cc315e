"""Code highlighting with pygments, into theme style names (`syntax*`, base `mdCodeBlock`).

The output names styles, never colours, so a theme change needs no re-highlight: nothing here is keyed by theme.

Streaming rule (`StreamingHighlight`): a growing code text is split into a *committed* prefix of lines, highlighted
once and kept, and the lines after it, lexed again on every update. Lexing resumes at the start of the uncommitted
lines from the lexer's initial state, so only a line boundary where that is safe becomes a commit point: one whose
line break is plain text (`Token.Text`, which covers whitespace) or ends a token that is neither a string nor a
multi-line comment. Inside an open multi-line string or comment nothing is committed, and the open construct is lexed
again until it closes. A boundary chosen this way is where pygments' regex lexers are back in their root state in
practice, but not provably (a lexer may keep state across plain line breaks, and a rule may look ahead past the text
streamed so far), so a streaming frame can differ from a full highlight; the renderer highlights a code block in full
once it is complete. `FORCE_COMMIT_LINES` bounds the re-lexed lines when no commit point comes (e.g. a diff, whose
line tokens all end in their line break).
"""

from __future__ import annotations

import functools

from pygments import lex
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Token,
    _TokenType,
)
from pygments.util import ClassNotFound

from apex_tui.widgets._canvas import Markup

# Checked in order: the first token type that contains the lexer's token picks the style.
_STYLE_OF: tuple[tuple[_TokenType, str], ...] = (
    (Comment, "syntaxComment"),
    (Keyword.Type, "syntaxType"),
    (Keyword.Constant, "syntaxNumber"),
    (Keyword, "syntaxKeyword"),
    (Name.Function, "syntaxFunction"),
    (Name.Class, "syntaxType"),
    (Name.Builtin, "syntaxType"),
    (Name.Decorator, "syntaxFunction"),
    (Name.Variable, "syntaxVariable"),
    (Name.Attribute, "syntaxVariable"),
    (Name.Tag, "syntaxKeyword"),
    (String, "syntaxString"),
    (Number, "syntaxNumber"),
    (Operator.Word, "syntaxKeyword"),
    (Operator, "syntaxOperator"),
    (Punctuation, "syntaxPunctuation"),
)

BASE_STYLE = "mdCodeBlock"


@functools.lru_cache(maxsize=256)
def _style(token_type: _TokenType) -> str:
    for parent, style in _STYLE_OF:
        if token_type in parent:
            return style
    return BASE_STYLE


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    if not language:
        return None
    try:
        lexer: Lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    return lexer


Line = list[tuple[str, str]]
"""One highlighted line: (style, text) runs."""

FORCE_COMMIT_LINES = 256
"""Uncommitted complete lines after which `StreamingHighlight` commits without a safe boundary."""


def _safe_break(token_type: _TokenType, value: str, end: int) -> bool:
    """Whether lexing may restart after the line break at `value[end - 1]` of a token of `token_type`."""
    if token_type in Token.Text:
        return True
    return end == len(value) and token_type not in String and token_type not in Comment.Multiline


def _lex(code: str, lexer: Lexer | None) -> tuple[list[Line], list[bool]]:
    """(lines of `code`, for each line break whether lexing may restart after it)."""
    if lexer is None:
        lines = code.split("\n")
        return [[(BASE_STYLE, line)] if line else [] for line in lines], [True] * (len(lines) - 1)
    lines_out: list[Line] = [[]]
    safe: list[bool] = []
    for token_type, value in lex(code, lexer):
        style = _style(token_type) if token_type is not Token.Text else BASE_STYLE
        start = 0
        while True:
            end = value.find("\n", start)
            part = value[start:] if end < 0 else value[start:end]
            if part:
                lines_out[-1].append((style, part))
            if end < 0:
                break
            start = end + 1
            safe.append(_safe_break(token_type, value, start))
            lines_out.append([])
    return lines_out, safe


def highlight_lines(code: str, language: str) -> list[Line]:
    """`code` split into lines, each a list of (style, text) runs; unknown languages get `mdCodeBlock` only.

    Tokens spanning lines (block comments, multi-line strings) keep their style on every line they cover.
    """
    return _lex(code, _lexer(language.strip().lower()))[0]


class StreamingHighlight:
    """The highlighted lines of one growing code text; an update re-lexes only the lines after the commit point.

    See the module docstring for the commit rule. `generation` changes whenever the committed lines are dropped
    (a text that does not extend the committed prefix), so holders of derived per-line state know to rebuild it.
    """

    def __init__(self, language: str) -> None:
        self._lexer = _lexer(language.strip().lower())
        self._text = ""  # the committed prefix, ending in a line break (or empty)
        self.committed: list[Line] = []
        """Lines of the committed prefix; only appended to until `generation` changes."""
        self.generation = 0

    def update(self, code: str) -> list[Line]:
        """Highlight `code` (an extension of earlier texts, ideally) and return its lines after `committed`.

        `committed + result` are the lines of `code`.
        """
        if not code.startswith(self._text):
            self._text = ""
            self.committed = []
            self.generation += 1
        rest = code[len(self._text) :]
        lines, safe = _lex(rest, self._lexer)
        commit = 0
        for index in range(len(safe) - 1, -1, -1):
            if safe[index]:
                commit = index + 1
                break
        if len(safe) - commit > FORCE_COMMIT_LINES:
            commit = len(safe)
        if commit:
            self.committed.extend(lines[:commit])
            cut = -1
            for _ in range(commit):
                cut = rest.index("\n", cut + 1)
            self._text += rest[: cut + 1]
        return lines[commit:]


def line_markup(runs: list[tuple[str, str]]) -> Markup:
    """One highlighted line as urwid markup."""
    return list(runs) if runs else ""
