"""Truncation helpers (spec tools.md §2, acceptance 23)."""

from apex_coding_agent.tools.truncate import (
    count_lines,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_format_size() -> None:
    assert format_size(51200) == "50.0KB"
    assert format_size(1023) == "1023B"
    assert format_size(1024) == "1.0KB"
    assert format_size(3 * 1024 * 1024 // 2) == "1.5MB"


def test_line_counting() -> None:
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\n\n") == 2


def test_truncate_head_by_lines_and_bytes() -> None:
    text = "\n".join(f"line {i}" for i in range(10))
    by_lines = truncate_head(text, max_lines=3, max_bytes=1000)
    assert by_lines.content == "line 0\nline 1\nline 2"
    assert (by_lines.truncated_by, by_lines.output_lines, by_lines.total_lines) == ("lines", 3, 10)
    # "line 0" costs 6 bytes, each later line 7 (its newline): 6 + 7 = 13 fits 15, a third does not.
    by_bytes = truncate_head(text, max_lines=100, max_bytes=15)
    assert by_bytes.content == "line 0\nline 1"
    assert by_bytes.truncated_by == "bytes"
    assert by_bytes.output_bytes == 13


def test_truncate_head_first_line_too_long() -> None:
    result = truncate_head("x" * 100 + "\nshort", max_lines=10, max_bytes=50)
    assert result.content == ""
    assert result.first_line_exceeds_limit
    assert result.to_wire()["firstLineExceedsLimit"] is True


def test_truncate_tail_keeps_end_and_partial_last_line() -> None:
    text = "\n".join(str(i) for i in range(1, 11))
    result = truncate_tail(text, max_lines=3, max_bytes=1000)
    assert result.content == "8\n9\n10"
    partial = truncate_tail("ab\n" + "é" * 20, max_lines=10, max_bytes=9)
    assert partial.last_line_partial
    # 9 bytes from the end start inside a two-byte character: advance to the boundary.
    assert partial.content == "é" * 4
    assert partial.truncated_by == "bytes"


def test_untruncated_is_verbatim() -> None:
    result = truncate_tail("a\nb\n")
    assert result.content == "a\nb\n"
    assert not result.truncated
    assert result.to_wire()["truncatedBy"] is None


def test_truncate_line() -> None:
    assert truncate_line("x" * 10) == "x" * 10
    assert truncate_line("y" * 700) == "y" * 500 + "... [truncated]"
