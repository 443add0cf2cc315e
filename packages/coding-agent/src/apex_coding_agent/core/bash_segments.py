"""Split a shell command into segments for permission rules (spec settings-and-trust.md §7).

A command is cut at unquoted newlines, `;`, `&&`, `||`, `|` and `&`, honouring quotes and backslash
escapes. Anything that could hide another command or expand to unknown text (command or process
substitution, variables, redirections, globs, braces, subshells, an unterminated quote) makes the
command *unparseable*: such a command never matches a rule and falls back to asking.
"""

from __future__ import annotations

# Characters that make a command unparseable when they appear unquoted.
_UNSAFE_UNQUOTED = set("<>${}()*?[]~`")


def split_command(command: str) -> list[str] | None:
    """The whitespace-normalized segments of `command`, or None when it is unparseable."""
    segments: list[str] = []
    current: list[str] = []
    i, n = 0, len(command)
    quote: str | None = None

    def close_segment() -> None:
        text = " ".join("".join(current).split())
        if text:
            segments.append(text)
        current.clear()

    while i < n:
        ch = command[i]
        if quote == "'":
            if ch == "'":
                quote = None
            current.append(ch)
            i += 1
            continue
        if quote == '"':
            if ch == "\\" and i + 1 < n:
                current.append(command[i : i + 2])
                i += 2
                continue
            if ch in "$`":
                return None  # expansion inside double quotes
            if ch == '"':
                quote = None
            current.append(ch)
            i += 1
            continue
        if ch == "\\":
            if i + 1 >= n:
                return None
            current.append(command[i : i + 2])
            i += 2
            continue
        if ch in "'\"":
            quote = ch
            current.append(ch)
            i += 1
            continue
        if ch == "\n" or ch == ";":
            close_segment()
            i += 1
            continue
        if ch in "&|":
            close_segment()
            i += 2 if command[i : i + 2] in ("&&", "||") else 1
            continue
        if ch in _UNSAFE_UNQUOTED:
            return None
        current.append(ch)
        i += 1
    if quote is not None:
        return None
    close_segment()
    return segments


def segment_matches(segment: str, rule: str) -> bool:
    """Exact text (whitespace-normalized), or `prefix:*` = the prefix alone or followed by a space."""
    rule_text = " ".join(rule.split())
    if rule_text.endswith(":*"):
        prefix = " ".join(rule_text[:-2].split())
        return segment == prefix or segment.startswith(prefix + " ")
    return segment == rule_text


def command_matches(command: str, rule: str) -> bool:
    """True only if the command parses and every segment matches `rule`."""
    segments = split_command(command)
    return bool(segments) and all(segment_matches(s, rule) for s in segments or [])


__all__ = ["command_matches", "segment_matches", "split_command"]
