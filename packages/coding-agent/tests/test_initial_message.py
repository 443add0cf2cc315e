"""modes.md §2: the initial prompt is stdin + @file texts + the first message, no separators."""

import base64
from pathlib import Path

import pytest

from apex_coding_agent.initial_message import FileArgumentError, build_initial_message

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_stdin_then_files_then_message(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line one")
    msg = build_initial_message("data\n", ["notes.txt"], "summarize", tmp_path)
    assert msg.text == f'data<file name="{tmp_path / "notes.txt"}">\nline one\n</file>\nsummarize'
    assert msg.images == []


def test_empty_stdin_counts_as_none(tmp_path: Path) -> None:
    assert build_initial_message("  \n", [], "hi", tmp_path).text == "hi"
    assert build_initial_message(None, [], None, tmp_path).empty


def test_images_become_attachments(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG_1PX)
    msg = build_initial_message(None, [str(tmp_path / "a.png")], "what is this", tmp_path)
    assert msg.text == f'<file name="{tmp_path / "a.png"}"></file>\nwhat is this'
    assert len(msg.images) == 1 and msg.images[0].mime_type == "image/png"
    assert base64.b64decode(msg.images[0].data) == PNG_1PX


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileArgumentError, match="Cannot read @nope.txt"):
        build_initial_message(None, ["nope.txt"], None, tmp_path)
