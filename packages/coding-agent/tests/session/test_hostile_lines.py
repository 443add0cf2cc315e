"""Issue 4 "Bad input" for session files beyond plain syntax errors: JSON nested past the parser's recursion limit
and bytes that are not UTF-8. Each is reported with file:line, every other entry loads, the file keeps its bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from session_test_helpers import copy_sample, user

from apex_coding_agent.session.entries import UnknownEntry
from apex_coding_agent.session.session_manager import SessionManager

DEEP = b"[" * 100_000
# Index fields in the usual place, so the loader indexes the line without parsing it; only the full parse fails.
DEEP_BODY = (
    b'{"type":"custom","id":"00000007","parentId":"00000006","timestamp":"2025-06-01T10:00:05.000Z",'
    b'"customType":"ext-state","data":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
)
NOT_UTF8 = (
    b'{"type":"custom","id":"00000007","parentId":"00000006","timestamp":"2025-06-01T10:00:05.000Z",'
    b'"customType":"ext-state","data":"caf\xe9"}'
)


def _replace_line(path: Path, index: int, line: bytes) -> bytes:
    lines = path.read_bytes().split(b"\n")
    lines[index] = line
    path.write_bytes(b"\n".join(lines))
    return path.read_bytes()


def test_deeply_nested_line_is_reported_not_a_crash(tmp_path: Path) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    before = _replace_line(path, 4, DEEP)
    sm = SessionManager.open(path)
    assert [str(i).split(": ")[0] for i in sm.issues] == [f"{path}:5"]
    assert "not valid JSON" in str(sm.issues[0])
    assert sm.get_entry("00000004") is None and sm.get_entry("00000005") is not None
    assert len(sm.get_entries()) == 16
    sm.build_session_context()
    assert path.read_bytes() == before
    sm.close()


@pytest.mark.parametrize("line", [DEEP_BODY, NOT_UTF8], ids=["nested-body", "not-utf8"])
def test_indexed_line_that_fails_its_full_parse_is_reported_and_kept(tmp_path: Path, line: bytes) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    before = _replace_line(path, 7, line)
    sm = SessionManager.open(path)
    entry = sm.get_entry("00000007")
    assert isinstance(entry, UnknownEntry) or entry is None
    sm.build_session_context()
    assert [str(i).split(": ")[0] for i in sm.issues] == [f"{path}:8"]
    assert sm.get_entry("00000008") is not None
    sm.append_message(user("still writable"))
    sm.close()
    assert path.read_bytes().startswith(before)


def test_deeply_nested_line_survives_a_migration_rewrite(tmp_path: Path) -> None:
    path = copy_sample("v2.jsonl", tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, DEEP)
    path.write_bytes(b"\n".join(lines))
    sm = SessionManager.open(path)
    assert path.read_bytes().split(b"\n")[2] == DEEP
    assert b'"version":3' in path.read_bytes().split(b"\n")[0]
    assert len(sm.get_entries()) == 3
    sm.close()
