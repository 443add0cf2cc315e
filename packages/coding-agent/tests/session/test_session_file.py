"""Reading, migrating and appending session files (spec sessions.md §3, §4, §7; checks 4-7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_test_helpers import DATA, assistant, copy_sample, read_lines, user

from apex_agent.messages import UnknownMessage
from apex_ai.types import SystemMessage, UserMessage
from apex_coding_agent.messages import BashExecutionMessage, BranchSummaryMessage, CustomMessage
from apex_coding_agent.session.entries import CompactionEntry, MessageEntry, UnknownEntry
from apex_coding_agent.session.file_errors import SessionFileError, SessionLockedError
from apex_coding_agent.session.session_manager import SessionManager


def test_v1_migrates_to_linear_chain(tmp_path: Path) -> None:
    path = copy_sample("v1.jsonl", tmp_path)
    sm = SessionManager.open(path)
    entries = sm.get_entries()
    assert [e.parent_id for e in entries] == [None] + [e.id for e in entries[:-1]]
    compaction = entries[4]
    assert isinstance(compaction, CompactionEntry)
    # raw index 3 (header = 0) is the second user question
    assert compaction.first_kept_entry_id == entries[2].id
    on_disk = read_lines(path)
    assert on_disk[0]["version"] == 3
    assert "firstKeptEntryIndex" not in on_disk[5] and on_disk[5]["firstKeptEntryId"] == entries[2].id
    assert [r["id"] for r in on_disk[1:]] == [e.id for e in entries]
    texts = [m.content for m in sm.build_session_context().messages[1:]]  # type: ignore[union-attr]
    assert texts == [
        "second question",
        [assistant("x").content[0].model_copy(update={"text": "second answer"})],
        "third question",
    ]
    sm.close()


def test_v2_hook_message_becomes_custom(tmp_path: Path) -> None:
    path = copy_sample("v2.jsonl", tmp_path)
    before = path.read_bytes().splitlines()
    sm = SessionManager.open(path)
    msg = sm.get_branch()[1]
    assert isinstance(msg, MessageEntry) and isinstance(msg.message, CustomMessage)
    after = path.read_bytes().splitlines()
    assert b'"version":3' in after[0] and b'"role":"custom"' in after[2]
    # lines the migration did not change keep their exact bytes (non-ASCII included)
    assert after[1] == before[1] and after[3] == before[3]
    sm.close()


def test_v3_is_read_without_rewrite(tmp_path: Path) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    sm = SessionManager.open(path)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert sm.get_header().delegation_depth == 1 and sm.cwd == "/tmp/v3"
    assert len(sm.get_entries()) == 17
    assert isinstance(sm.get_entry("00000009"), UnknownEntry)
    assert sm.get_label("00000003") == "start" and sm.get_session_name() == "my session"
    ctx = sm.build_session_context()
    assert ctx.thinking_level == "high" and ctx.model is not None and ctx.model.model_id == "claude-x"
    kinds = [type(m).__name__ for m in ctx.messages]
    assert kinds == ["UserMessage", "AssistantMessage", "BranchSummaryMessage", "UserMessage"]
    assert isinstance(ctx.messages[2], BranchSummaryMessage) and ctx.messages[2].from_id == "00000004"
    assert isinstance(ctx.messages[3], UserMessage) and ctx.messages[3].content == []
    sm.branch("0000000d")
    msgs = sm.build_session_context().messages
    assert [type(m).__name__ for m in msgs] == [
        "CompactionSummaryMessage",
        "ToolResultMessage",
        "BashExecutionMessage",
        "CustomMessage",
        "SystemMessage",
        "UnknownMessage",
        "UserMessage",
    ]
    assert isinstance(msgs[4], SystemMessage) and isinstance(msgs[5], UnknownMessage)
    assert isinstance(msgs[2], BashExecutionMessage)
    sm.close()


def test_truncated_last_line_loads_and_next_append_is_clean(tmp_path: Path) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    data = path.read_bytes()
    torn = data[: data.rindex(b"\n", 0, len(data) - 1) + 40]
    path.write_bytes(torn)
    sm = SessionManager.open(path)
    assert len(sm.get_entries()) == 16 and sm.get_leaf_id() == "00000010"
    assert [i.line_no for i in sm.issues] == [18]
    assert str(sm.issues[0]).startswith(f"{path}:18: ")
    sm.append_message(user("resumed"))
    sm.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[17] == torn.split(b"\n")[17]  # the torn bytes are kept, on their own line
    reopened = SessionManager.open(path)
    assert len(reopened.get_entries()) == 17 and len(reopened.issues) == 1
    reopened.close()


def test_corrupt_middle_line_reported_and_file_untouched(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[4] = b'{"type":"message", this is not json'
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    sm = SessionManager.open(path)
    assert [str(i) for i in sm.issues] == [f"{path}:5: not valid JSON: " + sm.issues[0].reason.split(": ", 1)[1]]
    assert f"{path}:5" in caplog.text
    assert sm.get_entry("00000004") is None and sm.get_entry("00000005") is not None
    assert len(sm.get_entries()) == 16
    assert path.read_bytes() == before
    sm.close()


@pytest.mark.parametrize("line", [b"[1, 2]", b"null", b"3", b'"text"'])
def test_valid_json_that_is_not_an_entry_is_reported_and_skipped(tmp_path: Path, line: bytes) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[4] = line
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    sm = SessionManager.open(path)
    assert [str(i) for i in sm.issues] == [f"{path}:5: not a session entry: " + sm.issues[0].reason.split(": ", 1)[1]]
    assert "expected a JSON object" in sm.issues[0].reason
    assert len(sm.get_entries()) == 16
    assert path.read_bytes() == before
    sm.close()


def test_corrupt_line_survives_migration_rewrite(tmp_path: Path) -> None:
    path = copy_sample("v2.jsonl", tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, b"garbage line")
    path.write_bytes(b"\n".join(lines))
    sm = SessionManager.open(path)
    assert path.read_bytes().split(b"\n")[2] == b"garbage line"
    assert len(sm.get_entries()) == 3
    sm.close()


def test_non_session_file_raises_and_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello":"world"}\n')
    with pytest.raises(SessionFileError, match="Session file is not a valid pi session"):
        SessionManager.open(path)
    assert path.read_bytes() == b'{"hello":"world"}\n'


def test_empty_file_gets_a_header(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    sm = SessionManager.open(path)
    lines = read_lines(path)
    assert len(lines) == 1 and lines[0]["type"] == "session" and lines[0]["id"] == sm.session_id
    sm.append_message(user("immediately written"))
    assert len(read_lines(path)) == 2
    sm.close()


def test_missing_path_becomes_new_session_there(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.jsonl"
    sm = SessionManager.open(path)
    sm.append_message(user("q"))
    assert not path.exists()
    sm.append_message(assistant("a"))
    assert [r["type"] for r in read_lines(path)] == ["session", "message", "message"]
    sm.close()


def test_pi_session_opens_continues_and_keeps_bytes(tmp_path: Path) -> None:
    path = copy_sample("pi_print_text.jsonl", tmp_path)
    original = path.read_bytes()
    sm = SessionManager.open(path)
    ctx = sm.build_session_context()
    assert [m.role for m in ctx.messages] == ["user", "assistant"]
    assert ctx.model is not None and (ctx.model.provider, ctx.model.model_id) == ("fake", "fake-model")
    assert ctx.thinking_level == "off"
    new_id = sm.append_message(user("again"))
    sm.append_message(assistant("Hello again"))
    sm.close()
    data = path.read_bytes()
    assert data.startswith(original)
    added = read_lines(path)[len(original.splitlines()) :]
    assert added[0]["id"] == new_id and added[0]["parentId"] == "ef3a7ef0"
    # the upstream's lines survive a trip through our models with the same fields and values
    reopened = SessionManager.open(path)
    upstream = read_lines(DATA / "pi_print_text.jsonl")
    checked = [r for r in reopened.iter_records() if r.line_no < len(upstream) + 1]
    assert len(checked) == 4
    for record in checked:
        assert record.raw == original.splitlines()[record.line_no - 1]
        assert record.entry.to_wire() == upstream[record.line_no - 1]
    reopened.close()


_HOLDER = """
import sys, time
from apex_coding_agent.session.session_manager import SessionManager
sm = SessionManager.open(sys.argv[1])
sm.append_custom_entry("hold", None)
print("locked", flush=True)
time.sleep(30)
"""

_WRITER = """
import sys
from apex_coding_agent.session.session_manager import SessionManager
sm = SessionManager.open(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    sm.append_custom_entry("spam", {"i": i, "pad": "x" * 20000})
    i += 1
"""


def _spawn(code: str, path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() in ("locked", "ready")
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def test_lock_refuses_second_writer_process(tmp_path: Path) -> None:
    path = copy_sample("pi_print_text.jsonl", tmp_path)
    sm = SessionManager.open(path)  # opened (read) before the other process starts writing
    proc = _spawn(_HOLDER, path)
    try:
        assert SessionManager.open(path).get_leaf_entry() is not None  # reading while locked is fine
        with pytest.raises(SessionLockedError, match=rf"in use by process {proc.pid}") as info:
            sm.append_message(user("me too"))
        assert info.value.pid == proc.pid and str(path) in str(info.value)
    finally:
        _stop(proc)
    # the holder died: its flock is gone, but the file grew, so this stale manager must not append blindly
    with pytest.raises(SessionFileError, match="changed on disk"):
        sm.append_message(user("stale"))
    fresh = SessionManager.open(path)
    fresh.append_message(user("now mine"))
    fresh.close()
    assert read_lines(path)[-1]["message"]["content"][0]["text"] == "now mine"


def test_writer_killed_mid_append_leaves_loadable_file(tmp_path: Path) -> None:
    path = copy_sample("pi_print_text.jsonl", tmp_path)
    proc = _spawn(_WRITER, path)
    time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    _stop(proc)
    sm = SessionManager.open(path)
    spam = [r for r in sm.iter_records() if r.type == "custom"]
    assert len(spam) > 0 and len(sm.issues) <= 1
    assert sm.get_leaf_id() == spam[-1].id
    sm.append_message(user("after crash"))
    sm.close()
    reopened = SessionManager.open(path)
    assert reopened.get_leaf_entry() is not None and reopened.get_leaf_entry().type == "message"  # type: ignore[union-attr]
    reopened.close()


def test_broken_line_found_lazily_is_reported_and_kept(tmp_path: Path) -> None:
    path = copy_sample("v3.jsonl", tmp_path)
    lines = path.read_bytes().split(b"\n")
    # index fields readable, body broken, closing brace present: only a full parse notices
    lines[7] = b'{"type":"custom","id":"00000007","parentId":"00000006","timestamp":"2025-06-01T10:00:05.000Z",oops}'
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    sm = SessionManager.open(path)
    assert sm.issues == []
    assert isinstance(sm.get_entry("00000007"), UnknownEntry)
    assert [str(i).split(": ")[0] for i in sm.issues] == [f"{path}:8"]
    assert sm.get_entry("00000008") is not None and sm.get_entry("00000008").parent_id == "00000007"  # type: ignore[union-attr]
    assert path.read_bytes() == before
