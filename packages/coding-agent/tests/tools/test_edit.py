"""`edit` (spec tools.md §5, acceptance 8-12)."""

import asyncio
from pathlib import Path

import pytest

from apex_agent.tools import ToolExecutionError
from apex_ai.types import TextContent
from apex_coding_agent.tools import EditTool
from apex_coding_agent.tools.edit_diff import generate_diff_string, generate_patch, normalize_for_fuzzy_match


async def _edit(cwd: Path, path: str, *edits: tuple[str, str]) -> object:
    params = {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in edits]}
    return await EditTool(str(cwd)).execute("c", params, None, None)


def _text(result: object) -> str:
    block = result.content[0]  # type: ignore[attr-defined]
    assert isinstance(block, TextContent)
    return block.text


async def test_crlf_and_bom_are_preserved(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes("\ufeffone\r\ntwo\r\nold\r\nfour\r\n".encode())
    result = await _edit(tmp_path, "w.txt", ("old", "new"))
    assert _text(result) == "Successfully replaced 1 block(s) in w.txt."
    assert (tmp_path / "w.txt").read_bytes() == "\ufeffone\r\ntwo\r\nnew\r\nfour\r\n".encode()
    diff = result.details["diff"].split("\n")  # type: ignore[attr-defined]
    assert "-3 old" in diff
    assert "+3 new" in diff
    assert result.details["firstChangedLine"] == 3  # type: ignore[attr-defined]


async def test_fuzzy_match_keeps_other_lines_byte_identical(tmp_path: Path) -> None:
    original = "keep me   \nsay \u201cquoted\u201d here\nalso\u00a0keep  \n"
    (tmp_path / "q.txt").write_text(original)
    await _edit(tmp_path, "q.txt", ('say "quoted" here', "say plain here"))
    assert (tmp_path / "q.txt").read_text() == "keep me   \nsay plain here\nalso\u00a0keep  \n"


async def test_fuzzy_match_with_trailing_whitespace_in_old_text(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("a = 1  \nb = 2\nc = 3\t\n")
    await _edit(tmp_path, "t.py", ("a = 1\nb = 2", "a = 10\nb = 20"))
    assert (tmp_path / "t.py").read_text() == "a = 10\nb = 20\nc = 3\t\n"


async def test_multiple_edits_against_original(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("alpha\nbeta\ngamma\n")
    result = await _edit(tmp_path, "m.txt", ("gamma", "GAMMA"), ("alpha", "beta"))
    assert _text(result) == "Successfully replaced 2 block(s) in m.txt."
    assert (tmp_path / "m.txt").read_text() == "beta\nbeta\nGAMMA\n"


async def test_duplicate_old_text(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("x = 1\nx = 1\n")
    with pytest.raises(ToolExecutionError) as info:
        await _edit(tmp_path, "d.txt", ("x = 1", "x = 2"))
    assert str(info.value) == (
        "Found 2 occurrences of the text in d.txt. The text must be unique. "
        "Please provide more context to make it unique."
    )
    with pytest.raises(ToolExecutionError, match=r"^Found 2 occurrences of edits\[1\] in d.txt. Each oldText"):
        await _edit(tmp_path, "d.txt", ("x = 1\nx", "y"), ("x = 1", "z"))


async def test_overlapping_edits(tmp_path: Path) -> None:
    (tmp_path / "o.txt").write_text("one two three\n")
    with pytest.raises(ToolExecutionError) as info:
        await _edit(tmp_path, "o.txt", ("one two", "1 2"), ("two three", "2 3"))
    assert str(info.value) == (
        "edits[0] and edits[1] overlap in o.txt. Merge them into one edit or target disjoint regions."
    )


async def test_identical_replacement(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("same\n")
    with pytest.raises(ToolExecutionError, match=r"^No changes made to s.txt. The replacement produced identical"):
        await _edit(tmp_path, "s.txt", ("same", "same"))


async def test_not_found_and_empty_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("content\n")
    with pytest.raises(ToolExecutionError) as info:
        await _edit(tmp_path, "n.txt", ("absent", "x"))
    assert str(info.value) == (
        "Could not find the exact text in n.txt. The old text must match exactly including all whitespace and newlines."
    )
    with pytest.raises(ToolExecutionError, match=r"^Could not find edits\[1\] in n.txt. The oldText must match"):
        await _edit(tmp_path, "n.txt", ("content", "x"), ("absent", "y"))
    with pytest.raises(ToolExecutionError, match=r"^oldText must not be empty in n.txt.$"):
        await _edit(tmp_path, "n.txt", ("", "x"))
    with pytest.raises(ToolExecutionError, match=r"^Could not edit file: gone.txt. Error code: ENOENT.$"):
        await _edit(tmp_path, "gone.txt", ("a", "b"))
    with pytest.raises(ToolExecutionError, match="edits must contain at least one replacement"):
        await EditTool(str(tmp_path)).execute("c", {"path": "n.txt", "edits": []}, None, None)


async def test_legacy_arguments(tmp_path: Path) -> None:
    tool = EditTool(str(tmp_path))
    (tmp_path / "l.txt").write_text("old value\nother\n")
    prepared = tool.prepare_arguments({"path": "l.txt", "oldText": "old value", "newText": "new value"})
    assert prepared == {"path": "l.txt", "edits": [{"oldText": "old value", "newText": "new value"}]}
    await tool.execute("c", prepared, None, None)
    as_string = tool.prepare_arguments({"path": "l.txt", "edits": '[{"oldText": "other", "newText": "else"}]'})
    await tool.execute("c", as_string, None, None)
    assert (tmp_path / "l.txt").read_text() == "new value\nelse\n"


async def test_concurrent_edits_of_one_file_both_land(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("top\nmiddle\nbottom\n")
    tool = EditTool(str(tmp_path))
    await asyncio.gather(
        tool.execute("1", {"path": "c.txt", "edits": [{"oldText": "top", "newText": "TOP"}]}, None, None),
        tool.execute("2", {"path": "c.txt", "edits": [{"oldText": "bottom", "newText": "BOTTOM"}]}, None, None),
    )
    assert (tmp_path / "c.txt").read_text() == "TOP\nmiddle\nBOTTOM\n"


def test_fuzzy_normalization() -> None:
    assert (
        normalize_for_fuzzy_match("\u2018a\u2019 \u201cb\u201d \u2013 \u2212 x\u00a0y  \nz\t") == "'a' \"b\" - - x y\nz"
    )


def test_display_diff_context_and_ellipsis() -> None:
    old = "\n".join(f"l{i}" for i in range(1, 21)) + "\n"
    new = old.replace("l3\n", "L3\n").replace("l18\n", "L18\n")
    diff, first = generate_diff_string(old, new)
    assert first == 3
    assert diff.split("\n") == [
        "  1 l1",
        "  2 l2",
        "- 3 l3",
        "+ 3 L3",
        "  4 l4",
        "  5 l5",
        "  6 l6",
        "  7 l7",
        "    ...",
        " 14 l14",
        " 15 l15",
        " 16 l16",
        " 17 l17",
        "-18 l18",
        "+18 L18",
        " 19 l19",
        " 20 l20",
    ]


def test_display_diff_skips_far_context() -> None:
    old = "\n".join(f"l{i}" for i in range(1, 31)) + "\n"
    diff, first = generate_diff_string(old, old.replace("l12\n", "L12\n"))
    assert first == 12
    assert diff.split("\n") == [
        "    ...",
        "  8 l8",
        "  9 l9",
        " 10 l10",
        " 11 l11",
        "-12 l12",
        "+12 L12",
        " 13 l13",
        " 14 l14",
        " 15 l15",
        " 16 l16",
        "    ...",
    ]


def test_unified_patch_counts_and_no_newline_marker() -> None:
    patch = generate_patch("a\nb\nc", "a\nB\nc", "f.txt")
    assert patch == "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n"
