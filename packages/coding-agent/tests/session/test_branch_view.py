"""Lazy branch walking (`get_branch_records`, `get_branch_view`) and context building around older compactions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from session_test_helpers import assistant, user

from apex_ai.types import AssistantMessage, TextContent, UserMessage
from apex_coding_agent.messages import CompactionSummaryMessage
from apex_coding_agent.session.branch_view import BranchView
from apex_coding_agent.session.entries import CompactionEntry, UnknownEntry
from apex_coding_agent.session.session_manager import SessionManager


def _ts(n: int) -> str:
    return f"2025-06-01T10:00:{n:02d}.000Z"


def _entry(n: int, parent: int | None, body: dict[str, Any]) -> dict[str, Any]:
    kind = body.pop("type")
    return {
        "type": kind,
        "id": f"e{n:07d}",
        "parentId": None if parent is None else f"e{parent:07d}",
        "timestamp": _ts(n),
        **body,
    }


def _msg(message: Any) -> dict[str, Any]:
    return {"type": "message", "message": message.to_wire()}


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    header = {"type": "session", "version": 3, "id": "hand", "timestamp": _ts(0), "cwd": "/w"}
    lines = [json.dumps(item, separators=(",", ":")) for item in [header, *entries]]
    path.write_bytes(("\n".join(lines) + "\n").encode())
    return path


def _nested_compaction_file(path: Path) -> Path:
    """e1..e4 messages, c5 compaction (keeps e3 on, with a retained tail), e6/e7, c8 compaction whose
    firstKeptEntryId (e3) lies before c5 and which has no retained tail (as pi writes it), then e9."""
    return _write(
        path,
        [
            _entry(1, None, _msg(user("one"))),
            _entry(2, 1, _msg(assistant("a1"))),
            _entry(3, 2, _msg(user("two"))),
            _entry(4, 3, _msg(assistant("a2"))),
            _entry(
                5,
                4,
                {
                    "type": "compaction",
                    "summary": "S1",
                    "firstKeptEntryId": "e0000003",
                    "tokensBefore": 100,
                    "retainedTail": [user("two").to_wire(), assistant("a2").to_wire()],
                },
            ),
            _entry(6, 5, _msg(user("three"))),
            _entry(7, 6, _msg(assistant("a3"))),
            _entry(8, 7, {"type": "compaction", "summary": "S2", "firstKeptEntryId": "e0000003", "tokensBefore": 200}),
            _entry(9, 8, _msg(user("four"))),
        ],
    )


def test_older_compaction_in_the_kept_range_is_not_projected(tmp_path: Path) -> None:
    sm = SessionManager.open(_nested_compaction_file(tmp_path / "nested.jsonl"))
    messages = sm.build_session_context().messages
    summaries = [m.summary for m in messages if isinstance(m, CompactionSummaryMessage)]
    assert summaries == ["S2"]
    texts = [
        block.text
        for m in messages
        if isinstance(m, UserMessage | AssistantMessage) and not isinstance(m.content, str)
        for block in m.content
        if isinstance(block, TextContent)
    ]
    assert len(messages) == 6
    assert texts == ["two", "a2", "three", "a3", "four"]
    # The older compaction is still on the branch (only its projection is left out).
    assert [type(e).__name__ for e in sm.get_branch()].count("CompactionEntry") == 2
    sm.close()


def test_branch_records_and_view_read_the_index_without_parsing(tmp_path: Path) -> None:
    sm = SessionManager.open(_nested_compaction_file(tmp_path / "nested.jsonl"))
    parsed_at_open = {r.id for r in sm.iter_records() if r.is_parsed}
    records = sm.get_branch_records()
    assert [r.id for r in records] == [f"e{n:07d}" for n in range(1, 10)]
    assert [r.type for r in records][4] == "compaction"
    view = sm.get_branch_view()
    assert isinstance(view, BranchView) and len(view) == 9
    assert view.type_at(7) == "compaction" and view.id_at(0) == "e0000001"
    assert view.index_of("e0000003") == 2
    assert view.index_of("e0000003", 0, 2) is None and view.index_of(None) is None
    assert view.record(8) is records[8]
    assert {r.id for r in view.records if r.is_parsed} == parsed_at_open
    entry = view[7]
    assert isinstance(entry, CompactionEntry) and entry.summary == "S2"
    assert view.parsed_count() == len(parsed_at_open | {"e0000008"})
    assert list(view) == sm.get_branch()
    assert list(reversed(view)) == sm.get_branch()[::-1]
    assert view[1:3] == sm.get_branch()[1:3]
    sideways = sm.get_branch_view("e0000004")
    assert [e.id for e in sideways] == ["e0000001", "e0000002", "e0000003", "e0000004"]
    sm.close()


def test_view_is_a_snapshot_and_reports_broken_lines_when_read(tmp_path: Path) -> None:
    path = _nested_compaction_file(tmp_path / "nested.jsonl")
    lines = path.read_bytes().split(b"\n")
    # Index fields intact, body broken: the loader indexes it, the view finds the damage on reading it.
    lines[6] = lines[6][: lines[6].index(b'"message":{')] + b"oops}"
    path.write_bytes(b"\n".join(lines))
    sm = SessionManager.open(path)
    view = sm.get_branch_view()
    assert view.type_at(5) == "message" and sm.issues == []
    assert isinstance(view[5], UnknownEntry)
    assert [str(i).split(": ")[0] for i in sm.issues] == [f"{path}:7"]
    sm.append_message(user("five"))
    assert len(view) == 9 and len(sm.get_branch_view()) == 10
    sm.close()
