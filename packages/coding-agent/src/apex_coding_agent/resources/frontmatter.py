"""YAML frontmatter of skills and prompt templates, read by a small hand-written parser.

No YAML library is installed, so this module parses the subset that skill and template files use, and nothing
else: `key: value` lines at the top level with plain, single-quoted or double-quoted scalars; `true`/`false`,
`null`/`~`, integers and floats; block scalars (`|`, `>`, with `-`/`+` chomping); plain scalars continued on more
indented lines; flow lists `[a, b]`; block lists (`- item`) and one-level maps (`key: value`) nested under a key;
`#` comments. It never evaluates tags, anchors or aliases: anything outside the subset raises `FrontmatterError`,
which callers turn into a warning that names the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

Scalar: TypeAlias = str | int | float | bool | None
Value: TypeAlias = Scalar | list[Scalar] | dict[str, Scalar]

_KEY_RE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]*)\s*:(?:\s+(.*))?$")
_INT_RE = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT_RE = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


class FrontmatterError(ValueError):
    """The frontmatter is outside the supported subset or malformed; the message says where."""


@dataclass(frozen=True)
class Frontmatter:
    """Parsed keys (empty when the file has no frontmatter) and the body after the closing `---`."""

    data: dict[str, Value]
    body: str


def split_frontmatter(text: str) -> Frontmatter:
    """Split `text` into frontmatter and body. A file not starting with a `---` line has no frontmatter.

    Raises `FrontmatterError` when the block is unterminated or cannot be parsed.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return Frontmatter({}, text)
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            data = parse_yaml_subset(lines[1:index])
            return Frontmatter(data, "\n".join(lines[index + 1 :]))
    raise FrontmatterError("frontmatter has no closing '---' line")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def parse_yaml_subset(lines: list[str]) -> dict[str, Value]:
    """Parse top-level `key: value` lines (see the module docstring for the subset)."""
    data: dict[str, Value] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        if _is_blank(line):
            index += 1
            continue
        if "\t" in line[: _indent(line) + 1]:
            raise FrontmatterError(f"line {index + 1}: tabs are not allowed for indentation")
        if _indent(line) != 0:
            raise FrontmatterError(f"line {index + 1}: unexpected indentation")
        match = _KEY_RE.match(line.rstrip())
        if match is None:
            raise FrontmatterError(f"line {index + 1}: expected 'key: value'")
        key, raw = match.group(1), (match.group(2) or "").strip()
        block_end = index + 1
        # Indented and empty lines belong to this key; a comment at column 0 ends its block.
        while block_end < len(lines) and (not lines[block_end].strip() or _indent(lines[block_end]) > 0):
            block_end += 1
        nested = lines[index + 1 : block_end]
        data[key] = _parse_value(raw, nested, index + 1)
        index = block_end
    return data


def _parse_value(raw: str, nested: list[str], line_no: int) -> Value:
    if raw[:1] in ("|", ">"):
        return _block_scalar(raw, nested, line_no)
    content = [line for line in nested if not _is_blank(line)]
    if not raw or raw.startswith("#"):
        if not content:
            return None
        if content[0].lstrip().startswith("- ") or content[0].strip() == "-":
            return _block_list(content, line_no)
        return _block_map(content, line_no)
    if raw.startswith("["):
        if content:
            raise FrontmatterError(f"line {line_no}: flow lists must fit on one line")
        return _flow_list(raw, line_no)
    if raw.startswith("{"):
        raise FrontmatterError(f"line {line_no}: flow maps are not supported")
    if raw[0] in ("'", '"'):
        if content:
            raise FrontmatterError(f"line {line_no}: quoted strings must fit on one line")
        value, rest = _quoted(raw, line_no)
        if rest and not rest.startswith("#"):
            raise FrontmatterError(f"line {line_no}: unexpected text after the closing quote")
        return value
    if raw[0] in ("&", "*", "!", "%", "@", "`"):
        raise FrontmatterError(f"line {line_no}: YAML tags, anchors and aliases are not supported")
    if content:
        # A plain scalar continued on more indented lines folds into one line.
        return " ".join([_strip_comment(raw), *(line.strip() for line in content)])
    return _plain(_strip_comment(raw))


def _strip_comment(text: str) -> str:
    match = re.search(r"\s#", text)
    return (text[: match.start()] if match else text).strip()


def _plain(text: str) -> Scalar:
    lowered = text.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if lowered in ("null", "~", ""):
        return None
    if _INT_RE.match(text):
        return int(text)
    if _FLOAT_RE.match(text):
        return float(text)
    return text


def _quoted(raw: str, line_no: int) -> tuple[str, str]:
    """The string of a quoted scalar at the start of `raw`, and the text after its closing quote."""
    quote = raw[0]
    out: list[str] = []
    index = 1
    while index < len(raw):
        char = raw[index]
        if quote == "'" and char == "'":
            if raw[index + 1 : index + 2] == "'":
                out.append("'")
                index += 2
                continue
            return "".join(out), raw[index + 1 :].strip()
        if quote == '"' and char == "\\":
            escaped = raw[index + 1 : index + 2]
            if escaped not in _DOUBLE_ESCAPES:
                raise FrontmatterError(f"line {line_no}: unsupported escape '\\{escaped}'")
            out.append(_DOUBLE_ESCAPES[escaped])
            index += 2
            continue
        if quote == '"' and char == '"':
            return "".join(out), raw[index + 1 :].strip()
        out.append(char)
        index += 1
    raise FrontmatterError(f"line {line_no}: unterminated quoted string")


def _item(text: str, line_no: int) -> Scalar:
    text = text.strip()
    if text[:1] in ("'", '"'):
        value, rest = _quoted(text, line_no)
        if rest and not rest.startswith("#"):
            raise FrontmatterError(f"line {line_no}: unexpected text after the closing quote")
        return value
    if text[:1] in ("[", "{", "&", "*", "!"):
        raise FrontmatterError(f"line {line_no}: nested collections are not supported")
    return _plain(_strip_comment(text))


def _flow_list(raw: str, line_no: int) -> list[Scalar]:
    text = _strip_comment(raw)
    if not text.endswith("]"):
        raise FrontmatterError(f"line {line_no}: unterminated flow list")
    inner = text[1:-1].strip()
    if not inner:
        return []
    items: list[Scalar] = []
    current = ""
    quote = ""
    for char in inner:
        if quote:
            current += char
            if char == quote:
                quote = ""
        elif char in ("'", '"'):
            quote = char
            current += char
        elif char == ",":
            items.append(_item(current, line_no))
            current = ""
        else:
            current += char
    if quote:
        raise FrontmatterError(f"line {line_no}: unterminated quoted string")
    items.append(_item(current, line_no))
    return items


def _block_list(content: list[str], line_no: int) -> list[Scalar]:
    indent = _indent(content[0])
    items: list[Scalar] = []
    for offset, line in enumerate(content, start=1):
        stripped = line.strip()
        if _indent(line) != indent or not (stripped.startswith("- ") or stripped == "-"):
            raise FrontmatterError(f"line {line_no + offset}: expected a '- item' list entry")
        items.append(_item(stripped[1:], line_no + offset))
    return items


def _block_map(content: list[str], line_no: int) -> dict[str, Scalar]:
    indent = _indent(content[0])
    out: dict[str, Scalar] = {}
    for offset, line in enumerate(content, start=1):
        match = _KEY_RE.match(line.strip())
        if _indent(line) != indent or match is None:
            raise FrontmatterError(f"line {line_no + offset}: expected a nested 'key: value' entry")
        raw = (match.group(2) or "").strip()
        out[match.group(1)] = _item(raw, line_no + offset) if raw else None
    return out


def _block_scalar(raw: str, nested: list[str], line_no: int) -> str:
    header = _strip_comment(raw)
    style, chomp = header[0], header[1:]
    if chomp not in ("", "-", "+"):
        raise FrontmatterError(f"line {line_no}: unsupported block scalar header '{header}'")
    body_lines = list(nested)
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    trailing = len(nested) - len(body_lines)
    indents = [_indent(line) for line in body_lines if line.strip()]
    indent = min(indents) if indents else 0
    texts = [line[indent:] if line.strip() else "" for line in body_lines]
    if style == "|":
        text = "\n".join(texts)
    else:
        # Folded: single newlines become spaces; blank lines stay as newlines.
        folded: list[str] = []
        for item in texts:
            if not item:
                folded.append("\n")
            elif folded and folded[-1] not in ("\n", ""):
                folded.append(" " + item)
            else:
                folded.append(item)
        text = "".join(folded)
    if chomp == "-" or not text:
        return text
    if chomp == "+":
        return text + "\n" * (1 + trailing)
    return text + "\n"


__all__ = ["Frontmatter", "FrontmatterError", "Scalar", "Value", "parse_yaml_subset", "split_frontmatter"]
