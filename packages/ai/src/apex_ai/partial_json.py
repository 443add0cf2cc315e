"""Best-effort parsing of tool-call argument JSON while it streams (spec ai.md §17).

Providers send tool arguments as raw JSON fragments. After every fragment the adapter re-parses
the whole buffer so `ToolCall.arguments` always holds the best reading so far. Models also emit
JSON that strict parsers reject (raw newlines inside strings, `\\d` in a regex); a small repair
pass fixes those before `jiter` parses the buffer in partial mode.
"""

from __future__ import annotations

from typing import Any

import jiter

_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
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
    in_string = False
    i = 0
    n = len(buffer)
    while i < n:
        char = buffer[i]
        if not in_string:
            out.append(char)
            in_string = char == '"'
            i += 1
            continue
        if char == '"':
            out.append(char)
            in_string = False
            i += 1
        elif char == "\\":
            if i + 1 >= n:  # cut right after the backslash
                out.append(char)
                i += 1
                continue
            nxt = buffer[i + 1]
            if nxt == "u":
                state = _unicode_escape_state(buffer, i + 2)
                if state != "invalid":
                    out.append(buffer[i : i + 6])
                    i += 6
                    continue
            elif nxt in _SIMPLE_ESCAPES:
                out.append(buffer[i : i + 2])
                i += 2
                continue
            out.append("\\\\")
            i += 1
        elif char < " ":
            out.append(_escape_control(char))
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def parse_partial_json(buffer: str) -> dict[str, Any]:
    """Parse a possibly incomplete JSON object; never raises.

    Returns the object read so far (incomplete trailing strings included), or `{}` when the buffer
    is empty, unreadable, or not a JSON object.
    """
    if not buffer or buffer.isspace():
        return {}
    try:
        # Any: JSON values are untyped until the tool's schema validates them.
        value: Any = jiter.from_json(repair_json(buffer).encode("utf-8", "replace"), partial_mode="trailing-strings")
    except Exception:  # jiter raises ValueError, but a parser bug must never break a stream either
        return {}
    return value if isinstance(value, dict) else {}


__all__ = ["parse_partial_json", "repair_json"]
