"""The fast load path (entries validated from their JSON text, read back in bulk) against the reference path.

The oracle is the parse every line took before the fast path: `json.loads`, the message through the coding agent's
registry (`parse_agent_message`), then `parse_entry` on the dict. Contexts are compared for every entry of a session
with branches, compactions (kept range and retained tail), unknown entry types, unknown roles and broken lines.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from apex_agent.messages import UnknownMessage, dump_message
from apex_ai._wire import WireModel
from apex_ai.types import AssistantMessage, UserMessage
from apex_coding_agent.messages import coding_agent_registry
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.context import SessionContext, build_context
from apex_coding_agent.session.entries import EntryBase, MessageEntry, UnknownEntry, parse_agent_message, parse_entry
from apex_coding_agent.session.records import Record, parse_records
from apex_coding_agent.session.scanner import read_session_file

HEADER = {"type": "session", "version": 3, "id": "fast", "timestamp": "2025-06-01T10:00:00.000Z", "cwd": "/tmp/fast"}


def _line(data: dict[str, Any]) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate can only be written as a `\\u` escape
        return json.dumps(data, separators=(",", ":"))
    return text


class _Writer:
    """Builds a session file line by line; entries get ids e0001, e0002, ... and increasing timestamps."""

    def __init__(self, header: dict[str, Any] = HEADER) -> None:
        self.lines: list[str] = [_line(header)]
        self.count = 0

    def entry(self, parent: str | None, type_: str, **fields: Any) -> str:
        self.count += 1
        entry_id = f"e{self.count:04d}"
        stamp = f"2025-06-01T10:{self.count // 60 % 60:02d}:{self.count % 60:02d}.000Z"
        self.lines.append(_line({"type": type_, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}))
        return entry_id

    def message(self, parent: str | None, message: dict[str, Any]) -> str:
        return self.entry(parent, "message", message=message)

    def raw(self, text: str) -> None:
        self.lines.append(text)

    def write(self, path: Path) -> Path:
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def _user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def _assistant(text: str, model: str = "m-1", ts: int = 2) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": text},
            {"type": "toolCall", "id": f"call-{text}", "name": "bash", "arguments": {"command": "ls"}},
        ],
        "api": "anthropic-messages",
        "provider": "prov",
        "model": model,
        "usage": {"input": 3, "output": 4, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 7},
        "stopReason": "toolUse",
        "timestamp": ts,
        "futureField": {"kept": True},
    }


def _tool_result(call: str, ts: int = 3) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "bash",
        "content": [{"type": "text", "text": "out"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "isError": False,
        "timestamp": ts,
    }


def _fixture(path: Path) -> Path:
    """A session exercising every entry kind, both compaction shapes, branches and broken lines."""
    w = _Writer()
    a = w.entry(None, "model_change", provider="prov", modelId="m-0")
    a = w.entry(a, "thinking_level_change", thinkingLevel="high")
    a = w.message(a, _user("start"))
    a = w.message(a, _assistant("one"))
    fork = w.message(a, _tool_result("call-one"))
    a = w.message(fork, {"role": "user", "content": None, "timestamp": 4})  # content null -> []
    a = w.message(a, {"role": "assistant", "content": 5, "timestamp": 5})  # malformed known role -> UnknownMessage
    a = w.message(a, {"role": "extensionRole", "payload": [1, {"x": None}], "timestamp": 6})  # unknown role
    w.raw('{"type":"message","id":"broken-json",')  # not JSON at all
    a = w.message(
        a,
        {
            "role": "bashExecution",
            "command": "git status",
            "output": "clean",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 7,
        },
    )
    a = w.entry(a, "custom", customType="ext-state", data={"n": 1})
    a = w.entry(a, "custom_message", customType="note", content="hidden", display=False, details={"d": 1})
    a = w.entry(a, "future_entry", payload=[1, 2, 3])  # unknown entry type
    a = w.message(a, {"role": "user", "content": "lone \ud800 surrogate", "timestamp": 8})
    w.raw("[1, 2]")  # valid JSON, no entry
    # Fast shape, but the message is no object: indexed, then reported when parsed.
    a_bad = w.entry(a, "message", message=5)
    a = w.message(a_bad, {"role": "system", "content": "foreign prompt", "timestamp": 9})
    kept = w.message(a, _user("kept from here", 10))
    a = w.message(kept, _assistant("two", model="m-2", ts=11))
    a = w.entry(a, "compaction", summary="old summary", firstKeptEntryId=kept, tokensBefore=100)
    a = w.message(a, _user("after first compaction", 12))
    a = w.entry(a, "model_change", provider="prov", modelId="m-3")
    a = w.entry(
        a, "compaction", summary="latest summary", firstKeptEntryId=kept, tokensBefore=200, details={"readFiles": []}
    )
    a = w.message(a, _user("after latest", 13))
    a = w.entry(a, "label", targetId=kept, label="here")
    main_leaf = w.entry(a, "session_info", name="fixture")
    # A side branch from `fork`: summary, a retained-tail compaction, more messages.
    b = w.entry(fork, "branch_summary", fromId=fork, summary="tried another way", details={"readFiles": ["x"]})
    b = w.entry(b, "branch_summary", fromId=b, summary="")  # empty summary projects to nothing
    b = w.message(b, _user("side", 14))
    b = w.entry(
        b,
        "compaction",
        summary="tail kept",
        firstKeptEntryId=b,
        tokensBefore=50,
        retainedTail=[_user("tail user", 15), {"role": "tailRole", "timestamp": 16}],
    )
    b = w.message(b, _assistant("three", ts=17))
    w.entry(None, "branch_summary", fromId="root", summary="from the root")  # a second root
    w.raw('{"type":"message","id":"torn","parentId":"' + main_leaf + '","timestamp":"2025')  # torn last line
    return w.write(path)


def _old_entry(raw: bytes) -> EntryBase:
    """The reference parse of one line (see the module docstring); raises for a broken line."""
    data = json.loads(raw)
    if data.get("type") == "message" and "message" in data:
        data["message"] = parse_agent_message(data["message"])
    if data.get("type") == "compaction" and isinstance(data.get("retainedTail"), list):
        data["retainedTail"] = [parse_agent_message(m) for m in data["retainedTail"]]
    return parse_entry(data)


def _oracle_context(manager: SessionManager) -> SessionContext:
    records = []
    for record in manager.get_branch_records():
        try:
            entry = _old_entry(record.raw)
        except ValueError:
            entry = UnknownEntry(type=record.type, id=record.id, parent_id=record.parent_id, timestamp=record.timestamp)
        records.append(Record.from_entry(entry, record.raw))
    return build_context(records)


def _dumped(context: SessionContext) -> list[dict[str, Any]]:
    return [dump_message(m) for m in context.messages]


def test_context_equals_the_reference_path_at_every_leaf(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    manager = SessionManager.open(path)
    oracle = SessionManager.open(path)
    ids = [record.id for record in manager.iter_records()]
    assert len(ids) == 30
    shapes = set()
    for leaf in ids:
        manager.branch(leaf)
        oracle.branch(leaf)
        fast, expected = manager.build_session_context(), _oracle_context(oracle)
        assert fast == expected, leaf
        assert _dumped(fast) == _dumped(expected)
        shapes.add(tuple(type(m).__name__ for m in fast.messages))
    # The leaves reach every projection: summaries, both compaction shapes, unknown and repaired messages.
    names = {name for shape in shapes for name in shape}
    assert {
        "BranchSummaryMessage",
        "CompactionSummaryMessage",
        "CustomMessage",
        "BashExecutionMessage",
        "UnknownMessage",
        "SystemMessage",
        "ToolResultMessage",
    } <= names


def test_every_entry_equals_the_reference_parse(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    manager = SessionManager.open(path)
    entries = manager.get_entries()  # bulk, fast path
    for record, entry in zip(manager.iter_records(), entries, strict=True):
        try:
            expected = _old_entry(record.raw)
        except ValueError:
            assert type(entry) is UnknownEntry and entry.id == record.id
            continue
        assert entry == expected
        assert entry.to_wire() == expected.to_wire()
    by_id = {entry.id: entry for entry in entries}
    repaired = by_id["e0006"]
    assert isinstance(repaired, MessageEntry) and repaired.message == UserMessage(content=[], timestamp=4)
    for entry_id in ("e0007", "e0008"):
        entry = by_id[entry_id]
        assert isinstance(entry, MessageEntry) and isinstance(entry.message, UnknownMessage)
    unknown = by_id["e0012"]
    assert type(unknown) is UnknownEntry and unknown.model_extra == {"payload": [1, 2, 3]}
    surrogate = by_id["e0013"]
    assert isinstance(surrogate, MessageEntry) and surrogate.message.content == "lone \ud800 surrogate"


def test_broken_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    manager = SessionManager.open(path)
    at_open = [(issue.line_no, issue.reason.split(":")[0]) for issue in manager.issues]
    assert at_open == [(10, "not valid JSON"), (16, "not a session entry"), (34, "not valid JSON")]
    manager.get_entries()
    assert [(i.line_no, i.reason.split(":")[0]) for i in manager.issues[3:]] == [(17, "invalid entry")]
    assert all(str(issue).startswith(f"{path}:") for issue in manager.issues)


def _big_v2_file(path: Path, entries: int, corrupt_at: int) -> tuple[Path, str, str]:
    """A v2 file of `entries` message entries; the lines at index `corrupt_at` and `corrupt_at + 1` are a line that
    is not JSON and a line in the indexed shape whose message is not an object. Returns the path and both lines."""
    w = _Writer({**HEADER, "version": 2})
    parent: str | None = None
    broken = ""
    shaped = ""
    for i in range(entries):
        if i == corrupt_at:
            broken = '{"type":"message","id":"zz", "oops'
            w.raw(broken)
            parent = w.entry(parent, "message", message=5)
            shaped = w.lines[-1]
            continue
        kind = i % 3
        body = _user(f"q{i}", i) if kind == 0 else _assistant(f"a{i}", ts=i) if kind == 1 else _tool_result(f"c{i}", i)
        if i == 7:
            body = {"role": "hookMessage", "customType": "h", "content": "hook", "display": True, "timestamp": i}
        parent = w.message(parent, body)
    return w.write(path), broken, shaped


def test_corrupt_lines_mid_big_file_are_reported_and_survive_the_migration_rewrite(tmp_path: Path) -> None:
    path, broken, shaped = _big_v2_file(tmp_path / "big.jsonl", 3000, 1500)
    manager = SessionManager.open(path)  # v2 -> v3: the whole file is rewritten once
    lines = path.read_text(encoding="utf-8").split("\n")
    assert json.loads(lines[0])["version"] == 3
    assert lines[1501] == broken and lines[1502] == shaped  # same place, same bytes
    assert '"role":"custom"' in lines[8]
    assert [(i.line_no, i.reason.split(":")[0]) for i in manager.issues] == [(1502, "not valid JSON")]
    context = manager.build_session_context()
    assert [(i.line_no, i.reason.split(":")[0]) for i in manager.issues[1:]] == [(1503, "invalid entry")]
    assert len(context.messages) == 2999  # the shaped line stands in as an UnknownEntry on the path
    assert context.model is not None and context.model.model_id == "m-1"
    # A second rewrite path, fork, copies the indexed line verbatim too.
    manager.close()
    forked = SessionManager.fork_from(path, str(tmp_path))
    assert forked.session_file is not None
    assert shaped in forked.session_file.read_text(encoding="utf-8").split("\n")
    forked.close()


@pytest.fixture
def collector() -> Iterator[None]:
    """Restores the collector's state whatever a test does with it."""
    enabled = gc.isenabled()
    try:
        yield
    finally:
        (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_bulk_parse_leaves_the_collector_as_it_found_it(tmp_path: Path, enabled: bool, collector: None) -> None:
    path, _broken, _shaped = _big_v2_file(tmp_path / "big.jsonl", 2500, 10)
    manager = SessionManager.open(path)
    (gc.enable if enabled else gc.disable)()
    context = manager.build_session_context()
    assert gc.isenabled() is enabled
    assert len(context.messages) == 2499


@pytest.mark.parametrize("enabled", [True, False])
def test_scanning_a_large_file_leaves_the_collector_as_it_found_it(
    tmp_path: Path, enabled: bool, collector: None
) -> None:
    w = _Writer()
    parent: str | None = None
    for i in range(1100):
        parent = w.entry(parent, "custom", customType="pad", data="x" * 4000 + str(i))
    path = w.write(tmp_path / "large.jsonl")
    assert path.stat().st_size > 4 << 20  # past the size from which the scan pauses the collector
    (gc.enable if enabled else gc.disable)()
    manager = SessionManager.open(path)
    assert gc.isenabled() is enabled
    assert sum(1 for _ in manager.iter_records()) == 1100 and manager.get_leaf_id() == parent


def test_bulk_reads_parse_only_the_given_records_whatever_the_span(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    reference = read_session_file(path)
    expected = {record.id: record.entry for record in reference.records}
    for span, gap in ((1, 0), (300, 0), (300, 10_000), (1 << 22, 1 << 16)):
        loaded = read_session_file(path)
        records = loaded.records
        chosen = records[1::3] + records[1::3]  # every third, each listed twice, out of file order
        chosen.reverse()
        parse_records(chosen, span=span, gap=gap)
        assert {r.id for r in records if r.is_parsed} == {r.id for r in chosen}
        for record in chosen:
            assert record.entry == expected[record.id]
        # The line whose full parse fails (17) is among the chosen: reported once, after the scan's reports.
        assert [i.line_no for i in loaded.issues] == [10, 16, 34, 17]


def test_bulk_parse_mixes_appended_and_loaded_records(tmp_path: Path) -> None:
    path = _fixture(tmp_path / "fixture.jsonl")
    manager = SessionManager.open(path)
    manager.branch("e0004")
    manager.append_message(UserMessage(content="appended", timestamp=99))
    manager.append_message(
        AssistantMessage(content=[], api="a", provider="p", model="m-9", stop_reason="stop", timestamp=100)
    )
    branch = manager.get_branch()
    assert [type(e).__name__ for e in branch][-2:] == ["MessageEntry", "MessageEntry"]
    context = manager.build_session_context()
    assert context.model is not None and context.model.model_id == "m-9"
    manager.close()
    reopened = SessionManager.open(path)
    assert _dumped(reopened.build_session_context()) == _dumped(context)
    reopened.close()


def test_lazy_branch_view_stays_lazy(tmp_path: Path) -> None:
    path, _broken, _shaped = _big_v2_file(tmp_path / "big.jsonl", 600, 300)
    manager = SessionManager.open(path)
    view = manager.get_branch_view()
    parsed_before = view.parsed_count()
    tail = view[-5:]
    assert len(tail) == 5 and view.parsed_count() == parsed_before + 5
    assert view[-1] == tail[-1]


class _LateRoleMessage(WireModel):
    """A role registered after the entry schemas were built, as an extension registers one."""

    role: Literal["fastLoadLateRole"] = "fastLoadLateRole"
    note: str
    timestamp: int


def test_a_role_registered_after_import_parses_to_its_model(tmp_path: Path) -> None:
    w = _Writer()
    first = w.message(None, _user("hi"))
    w.message(first, {"role": "fastLoadLateRole", "note": "late", "timestamp": 3})
    path = w.write(tmp_path / "late.jsonl")
    if not coding_agent_registry.is_registered("fastLoadLateRole"):
        # Entry schemas are built (first use) before the role exists: it is unknown then, its model afterwards.
        before = SessionManager.open(path).build_session_context()
        assert isinstance(before.messages[-1], UnknownMessage)
        coding_agent_registry.register("fastLoadLateRole", _LateRoleMessage)
    context = SessionManager.open(path).build_session_context()
    assert context.messages[-1] == _LateRoleMessage(note="late", timestamp=3)
