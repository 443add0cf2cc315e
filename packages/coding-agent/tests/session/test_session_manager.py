"""SessionManager acceptance checks (spec sessions.md "Acceptance checks" 1-3, 8-15, 20)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from session_test_helpers import assistant, read_lines, user

from apex_ai.types import UserMessage
from apex_coding_agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from apex_coding_agent.session.entries import MessageEntry
from apex_coding_agent.session.session_manager import SESSION_ID_ERROR, SessionManager


def _started(cwd: Path) -> SessionManager:
    sm = SessionManager.create(str(cwd))
    sm.append_model_change("fake", "fake-model")
    sm.append_thinking_level_change("off")
    return sm


def test_deferred_creation_until_first_assistant(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    sm.append_message(user("Say hello"))
    assert sm.session_file is not None and not sm.session_file.exists()
    sm.append_message(assistant("Hello!"))
    lines = read_lines(sm.session_file)
    assert [r["type"] for r in lines] == ["session", "model_change", "thinking_level_change", "message", "message"]
    assert lines[0]["version"] == 3
    assert lines[1]["parentId"] is None
    assert [r["parentId"] for r in lines[2:]] == [r["id"] for r in lines[1:-1]]
    sm.append_session_info("named")
    assert read_lines(sm.session_file)[-1]["name"] == "named"
    sm.close()


def test_unanswered_session_leaves_no_file(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    sm.append_message(user("q"))
    sm.append_session_info("lost")
    sm.close()
    assert sm.session_file is not None and not sm.session_file.parent.exists()


def test_dir_and_file_name(tmp_path: Path) -> None:
    sm = SessionManager.create("/a/b:c")
    assert sm.session_file is not None
    assert sm.session_file.parent == tmp_path / "agent" / "sessions" / "--a-b-c--"
    assert re.match(rf"^\d{{4}}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{{3}}Z_{sm.session_id}\.jsonl$", sm.session_file.name)
    assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", sm.session_id)


def test_ids_and_timestamps(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    for i in range(30):
        sm.append_message(user(f"q{i}", ts=i))
        sm.append_message(assistant(f"a{i}", ts=i))
    assert sm.session_file is not None
    entries = read_lines(sm.session_file)[1:]
    ids = [e["id"] for e in entries]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == len(ids)
    assert all(isinstance(e["timestamp"], str) for e in entries)
    assert all(isinstance(e["message"]["timestamp"], int) for e in entries if e["type"] == "message")
    sm.close()


def test_custom_session_id_validation(tmp_path: Path) -> None:
    assert SessionManager.in_memory(str(tmp_path), id="my.id-1").session_id == "my.id-1"
    with pytest.raises(ValueError, match=re.escape(SESSION_ID_ERROR)):
        SessionManager.create(str(tmp_path), id="bad..id-")


def test_branch_creates_sibling_in_timestamp_order(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    x = sm.append_message(user("x"))
    first = sm.append_message(assistant("one"))
    sm.branch(x)
    second = sm.append_message(assistant("two"))
    assert sm.get_entry(second) is not None and sm.get_entry(second).parent_id == x  # type: ignore[union-attr]
    assert sm.get_entry(first) is not None
    roots = sm.get_tree()
    assert len(roots) == 1 and [c.entry.id for c in roots[0].children] == [first, second]
    assert [e.id for e in sm.get_branch()] == [x, second]
    with pytest.raises(KeyError, match="Entry nope not found"):
        sm.branch("nope")


def test_reset_leaf_makes_second_root(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(user("a"))
    sm.reset_leaf()
    assert sm.build_session_context().messages == []
    root2 = sm.append_message(user("b"))
    assert sm.get_entry(root2).parent_id is None  # type: ignore[union-attr]
    assert len(sm.get_tree()) == 2


def test_deep_tree_does_not_recurse(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    for i in range(5000):
        sm.append_custom_entry("step", {"i": i})
    node = sm.get_tree()[0]
    depth = 1
    while node.children:
        node = node.children[0]
        depth += 1
    assert depth == 5000


def _compacted(tmp_path: Path, retained: bool) -> tuple[SessionManager, list[str]]:
    sm = SessionManager.in_memory(str(tmp_path))
    ids = [sm.append_message(user("u1", 1)), sm.append_message(assistant("a1", 2))]
    ids += [sm.append_message(user("u2", 3)), sm.append_message(assistant("a2", 4))]
    tail = [user("tail", 9)] if retained else None
    sm.append_compaction("summary!", ids[2], 500, details={"readFiles": [], "modifiedFiles": []}, retained_tail=tail)
    sm.append_message(user("after", 5))
    return sm, ids


def test_context_with_compaction(tmp_path: Path) -> None:
    sm, _ = _compacted(tmp_path, retained=False)
    msgs = sm.build_session_context().messages
    assert isinstance(msgs[0], CompactionSummaryMessage) and msgs[0].summary == "summary!"
    assert msgs[0].tokens_before == 500
    assert [m.content[0].text for m in msgs[1:]] == ["u2", "a2", "after"]  # type: ignore[union-attr]


def test_context_with_retained_tail(tmp_path: Path) -> None:
    sm, _ = _compacted(tmp_path, retained=True)
    msgs = sm.build_session_context().messages
    assert isinstance(msgs[0], CompactionSummaryMessage)
    assert [m.content[0].text for m in msgs[1:]] == ["tail", "after"]  # type: ignore[union-attr]


def test_settings_from_branch(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(user("q"))
    ctx = sm.build_session_context()
    assert (ctx.thinking_level, ctx.model, ctx.has_thinking_change) == ("off", None, False)
    sm.append_model_change("p1", "m1")
    assert sm.build_session_context().model is not None
    sm.append_message(assistant("a", provider="p2", model="m2"))
    sm.append_thinking_level_change("high")
    ctx = sm.build_session_context()
    assert ctx.thinking_level == "high" and ctx.model is not None
    assert (ctx.model.provider, ctx.model.model_id) == ("p2", "m2")


def test_custom_entries_never_in_context(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_custom_entry("state", {"a": 1})
    sm.append_custom_message_entry("note", "hidden", display=False, details={"d": 1})
    sm.append_message(BashExecutionMessage(command="ls", output="", exit_code=0, timestamp=3))
    msgs = sm.build_session_context().messages
    assert len(msgs) == 2
    assert isinstance(msgs[0], CustomMessage) and msgs[0].content == "hidden" and msgs[0].display is False
    assert msgs[0].timestamp > 0
    assert isinstance(msgs[1], BashExecutionMessage)


def test_summary_roles_are_not_message_entries(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    with pytest.raises(ValueError):
        sm.append_message(BranchSummaryMessage(summary="s", from_id=None, timestamp=1))
    with pytest.raises(ValueError):
        sm.append_message(assistant("p").model_copy(update={"stop_reason": "pending"}))


def test_labels(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    target = sm.append_message(user("q"))
    label_id = sm.append_label_change(target, "mark")
    assert sm.get_leaf_id() == label_id and sm.get_label(target) == "mark"
    assert sm.get_tree()[0].label == "mark"
    sm.append_label_change(target, "")
    assert sm.get_label(target) is None
    with pytest.raises(KeyError):
        sm.append_label_change("missing", "x")


def test_session_name(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    first = sm.append_session_info("a\r\nb ")
    entry = sm.get_entry(first)
    assert entry is not None and entry.model_dump()["name"] == "a b"
    assert sm.get_session_name() == "a b"
    sm.reset_leaf()  # a session_info on another branch still counts: file order wins
    sm.append_session_info("other")
    assert sm.get_session_name() == "other"
    sm.append_session_info("")
    assert sm.get_session_name() is None


def test_branch_with_summary(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    first = sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    summary_id = sm.branch_with_summary(first, "went elsewhere", details={"readFiles": [], "modifiedFiles": []})
    entry = sm.get_entry(summary_id)
    assert entry is not None and entry.parent_id == first
    assert entry.model_dump(by_alias=True)["fromId"] == first
    msgs = sm.build_session_context().messages
    assert isinstance(msgs[-1], BranchSummaryMessage) and msgs[-1].summary == "went elsewhere"
    root_summary = sm.get_entry(sm.branch_with_summary(None, "from root"))
    assert root_summary is not None and root_summary.parent_id is None
    assert root_summary.model_dump(by_alias=True)["fromId"] == "root"


def test_reopen_restores_leaf_to_last_entry(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    q = sm.append_message(user("q"))
    last = sm.append_message(assistant("a"))
    sm.branch(q)  # navigate without appending
    sm.close()
    assert sm.session_file is not None
    reopened = SessionManager.open(sm.session_file)
    assert reopened.get_leaf_id() == last
    reopened.close()


def test_fork_extraction_from_user_message(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    u1 = sm.append_message(user("first"))
    a1 = sm.append_message(assistant("one"))
    sm.append_label_change(u1, "keep-me")
    u2 = sm.append_message(user("second question"))
    sm.append_message(assistant("two"))
    old_file = sm.session_file
    assert old_file is not None
    old_lines = {r["id"]: r for r in read_lines(old_file)[1:]}
    target = sm.get_entry(u2)
    assert isinstance(target, MessageEntry) and target.parent_id is not None
    new_file = sm.create_branched_session(target.parent_id)
    assert new_file is not None and new_file != old_file
    lines = read_lines(new_file)
    assert lines[0]["parentSession"] == str(old_file)
    non_label = [r for r in lines[1:] if r["type"] != "label"]
    assert non_label[-1]["id"] == a1
    # kept entries are verbatim copies (the label between a1 and u2 was dropped, a1 kept its parent)
    assert all(r == old_lines[r["id"]] for r in non_label)
    labels = [r for r in lines[1:] if r["type"] == "label"]
    assert len(labels) == 1 and labels[0]["targetId"] == u1 and labels[0]["label"] == "keep-me"
    assert (
        labels[0]["timestamp"] == old_lines[[k for k, v in old_lines.items() if v["type"] == "label"][0]]["timestamp"]
    )
    assert sm.get_label(u1) == "keep-me"
    text = target.message
    assert isinstance(text, UserMessage)
    sm.close()


def test_fork_of_unsaved_session_is_refused(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    q = sm.append_message(user("q"))
    with pytest.raises(Exception, match="has not been saved yet"):
        sm.create_branched_session(q)


def test_new_session_and_fork_from(tmp_path: Path) -> None:
    sm = _started(tmp_path)
    sm.append_message(user("q"))
    sm.append_message(assistant("a"))
    source = sm.session_file
    assert source is not None
    sm.new_session(parent_session=str(source))
    assert sm.get_entries() == [] and sm.session_file != source
    assert sm.get_header().parent_session == str(source)
    sm.close()
    other = tmp_path / "other"
    other.mkdir()
    forked = SessionManager.fork_from(source, str(other))
    assert (
        forked.session_file is not None
        and forked.session_file.parent.name == "--" + str(other)[1:].replace("/", "-") + "--"
    )
    src_lines = source.read_bytes().splitlines()[1:]
    assert forked.session_file.read_bytes().splitlines()[1:] == src_lines
    assert forked.get_header().cwd == str(other) and forked.get_header().parent_session == str(source)
    forked.close()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(Exception, match="Cannot fork: source session file is empty or invalid"):
        SessionManager.fork_from(empty, str(other))


def test_list_and_continue_recent(tmp_path: Path) -> None:
    made = []
    for i in range(3):
        sm = _started(tmp_path)
        sm.append_message(user(f"question {i}", ts=1000 + i))
        sm.append_message(assistant(f"answer {i}", ts=2000 + i))
        if i == 1:
            sm.append_session_info("named one")
        sm.close()
        assert sm.session_file is not None
        os.utime(sm.session_file, (2_000_000 + i, 2_000_000 + i))
        made.append(sm.session_file)
    infos = SessionManager.list_sessions(str(tmp_path))
    assert [i.path for i in infos] == list(reversed(made))
    assert infos[1].name == "named one" and infos[0].first_message == "question 2"
    assert infos[0].message_count == 2 and "answer 2" in infos[0].all_messages_text
    assert len(SessionManager.list_all()) == 3
    recent = SessionManager.continue_recent(str(tmp_path))
    assert recent.session_file == made[-1] and recent.get_leaf_entry() is not None
    recent.close()


def test_orphans_and_self_parents_are_roots(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}\n'
        '{"type":"custom","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:03.000Z","customType":"c"}\n'
        '{"type":"custom","id":"bbbbbbbb","parentId":"missing1","timestamp":"2025-01-01T00:00:02.000Z","customType":"c"}\n'
        '{"type":"custom","id":"cccccccc","parentId":"cccccccc","timestamp":"2025-01-01T00:00:01.000Z","customType":"c"}\n'
        '{"type":"custom","id":"dddddddd","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:04.000Z","customType":"c"}\n'
    )
    sm = SessionManager.open(path)
    assert [n.entry.id for n in sm.get_tree()] == ["cccccccc", "bbbbbbbb", "aaaaaaaa"]
    assert [e.id for e in sm.get_children("aaaaaaaa")] == ["dddddddd"]
    assert [e.id for e in sm.get_branch("cccccccc")] == ["cccccccc"]


def test_custom_dir_lists_only_this_cwd(tmp_path: Path) -> None:
    custom = tmp_path / "custom"
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    paths = []
    for n, cwd in enumerate([here, elsewhere]):
        sm = SessionManager.create(str(cwd), session_dir=custom)
        sm.append_message(user("q"))
        sm.append_message(assistant("a"))
        sm.close()
        assert sm.session_file is not None
        os.utime(sm.session_file, (1_000_000 + n, 1_000_000 + n))
        paths.append(sm.session_file)
    assert [i.path for i in SessionManager.list_sessions(str(here), custom)] == [paths[0]]
    # the newest file by mtime belongs to the other cwd, so continue_recent must skip it
    recent = SessionManager.continue_recent(str(here), custom)
    assert recent.session_file == paths[0]
    recent.close()
    assert len(SessionManager.list_all(custom.parent)) == 2
