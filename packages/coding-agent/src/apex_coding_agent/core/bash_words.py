"""Bash words read from the tree-sitter-bash tree: the literal value of a word after quote removal, or None when
the shell would expand it (variables, substitutions, globs, braces, `~`). Used by bash_line.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

Words = tuple[str | None, ...]
"""A command's words: the literal value of each, or None where the shell expands it."""


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(r"[0-7]{1,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|c.", re.DOTALL)


def _ansi_c(body: str) -> str:
    """The value of `$'…'` quoting (body without `$'` and `'`)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        match = _ANSI_NUMERIC.match(body, i + 1)
        if match is None:
            out.append("\\" + nxt)
            i += 2
            continue
        token = match.group()
        if token[0] == "c":
            out.append(chr(ord(token[1]) & 0x1F))
        elif token[0] in "xuU":
            out.append(chr(min(int(token[1:], 16), 0x10FFFF)))
        else:
            out.append(chr(int(token, 8) & 0xFF))
        i = match.end()
    return "".join(out)


def double_quoted(text: str) -> str:
    """Backslash removal inside double quotes: only before `$`, `` ` ``, `"`, `\\` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


# Unquoted characters that make bash expand a word: globs, brace expansion, tilde, expansions.
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_BRACKET = re.compile(r"\[.*\]")


@dataclass
class _Piece:
    value: str
    quoted: bool


def _pieces(node: Node) -> list[_Piece] | None:
    """The word as literal pieces (quoted or not), or None when it holds an expansion."""
    kind = node.type
    text = node_text(node)
    if kind in ("word", "number"):
        if "$" in text or "`" in text:
            return None
        out: list[_Piece] = []
        i = 0
        while i < len(text):
            if text[i] == "\\" and i + 1 < len(text):
                if text[i + 1] != "\n":
                    out.append(_Piece(text[i + 1], True))
                i += 2
            else:
                out.append(_Piece(text[i], False))
                i += 1
        return out
    if kind == "raw_string":
        return [_Piece(text[1:-1], True)]
    if kind == "ansi_c_string":
        return [_Piece(_ansi_c(text[2:-1]), True)]
    if kind in ("string", "translated_string"):
        parts: list[_Piece] = []
        for child in node.named_children:
            if child.type != "string_content":
                return None
            parts.append(_Piece(double_quoted(node_text(child)), True))
        return parts
    if kind == "concatenation":
        joined: list[_Piece] = []
        for child in node.children:
            sub = _pieces(child)
            if sub is None:
                return None
            joined.extend(sub)
        return joined
    return None


def word_value(node: Node) -> str | None:
    """The literal value of a word after quote removal, or None when the shell would expand it."""
    pieces = _pieces(node)
    if pieces is None:
        return None
    # Mark quoted characters so expansion syntax is only looked for where the shell sees it.
    shape = "".join(p.value if not p.quoted else "\0" * len(p.value) for p in pieces)
    if any(c in shape for c in "*?") or _GLOB_BRACKET.search(shape) or _BRACE.search(shape):
        return None
    if shape.startswith("~") or "=~" in shape or ":~" in shape:
        return None
    return "".join(p.value for p in pieces)


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


# ----------------------------------------------------------------------------- wrappers


__all__ = ["Words", "double_quoted", "node_text", "word_value"]
