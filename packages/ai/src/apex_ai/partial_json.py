"""Best-effort parsing of tool-call argument JSON while it streams.

Providers send tool arguments as raw JSON fragments. After every fragment the adapter re-parses
the whole buffer so `ToolCall.arguments` always holds the best reading so far. Models also emit
JSON that strict parsers reject (raw newlines inside strings, `\\d` in a regex); a small repair
pass fixes those before `jiter` parses the buffer in partial mode.
"""

from __future__ import annotations

import re
from typing import Any

import jiter

_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_STRING_SPECIAL = re.compile(r'["\\\x00-\x1f]')
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_control(char: str) -> str:
    return _CONTROL_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _unicode_escape_state(buffer: str, start: int) -> str:
    """Classify the characters after `\\u` at `start`: "valid", "cut" (buffer ends early) or "invalid"."""
    digits = buffer[start : start + 4]
    if not all(d in _HEX_DIGITS for d in digits):
        return "invalid"
    return "valid" if len(digits) == 4 else "cut"


def repair_json(buffer: str) -> str:
    """Make string literals in `buffer` acceptable to a strict JSON parser.

    Inside strings, raw control characters become escapes and a backslash that does not start a
    valid escape is doubled (so it stands for itself). An escape cut off by the end of the buffer
    is left alone: the partial parser drops it, and the next fragment completes it.
    Text outside strings is not touched.
    """
    out: list[str] = []
    i = 0
    n = len(buffer)
    while i < n:
        quote = buffer.find('"', i)
        if quote < 0:
            out.append(buffer[i:])
            break
        out.append(buffer[i : quote + 1])
        i = _repair_string_body(buffer, quote + 1, out)
    return "".join(out)


def _repair_string_body(buffer: str, i: int, out: list[str]) -> int:
    """Copy a string body starting at `i` into `out`, repaired; return the index after its closing quote."""
    n = len(buffer)
    while i < n:
        match = _STRING_SPECIAL.search(buffer, i)
        if match is None:
            out.append(buffer[i:])
            return n
        start = match.start()
        out.append(buffer[i:start])
        char = buffer[start]
        if char == '"':
            out.append(char)
            return start + 1
        if char != "\\":
            out.append(_escape_control(char))
            i = start + 1
            continue
        if start + 1 >= n:  # cut right after the backslash
            out.append(char)
            return n
        nxt = buffer[start + 1]
        if nxt == "u" and _unicode_escape_state(buffer, start + 2) != "invalid":
            out.append(buffer[start : start + 6])
            i = start + 6
        elif nxt in _SIMPLE_ESCAPES:
            out.append(buffer[start : start + 2])
            i = start + 2
        else:
            out.append("\\\\")
            i = start + 1
    return n


def parse_partial_json(buffer: str) -> dict[str, Any]:
    """Parse a possibly incomplete JSON object; never raises.

    Returns the object read so far (incomplete trailing strings included), or `{}` when the buffer
    is empty, unreadable, or not a JSON object.
    """
    if not buffer or buffer.isspace():
        return {}
    # Most buffers are valid JSON prefixes: parse them as they are and pay for the repair pass only on failure.
    for candidate in (buffer, None):
        text = repair_json(buffer) if candidate is None else candidate
        try:
            # Any: JSON values are untyped until the tool's schema validates them.
            value: Any = jiter.from_json(text.encode("utf-8", "replace"), partial_mode="trailing-strings")
        except Exception:  # jiter raises ValueError, but a parser bug must never break a stream either
            continue
        return value if isinstance(value, dict) else {}
    return {}


__all__ = ["parse_partial_json", "repair_json"]
