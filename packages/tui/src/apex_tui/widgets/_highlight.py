"""Code highlighting with pygments, into theme style names (`syntax*`, base `mdCodeBlock`)."""

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


def highlight_lines(code: str, language: str) -> list[list[tuple[str, str]]]:
    """`code` split into lines, each a list of (style, text) runs; unknown languages get `mdCodeBlock` only.

    Tokens spanning lines (block comments, multi-line strings) keep their style on every line they cover.
    """
    lexer = _lexer(language.strip().lower())
    lines: list[list[tuple[str, str]]] = [[]]
    if lexer is None:
        return [[(BASE_STYLE, line)] if line else [] for line in code.split("\n")]
    for token_type, value in lex(code, lexer):
        style = _style(token_type) if token_type is not Token.Text else BASE_STYLE
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append((style, part))
    return lines


def line_markup(runs: list[tuple[str, str]]) -> Markup:
    """One highlighted line as urwid markup."""
    return list(runs) if runs else ""
