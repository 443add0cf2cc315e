"""The session index: a cache that always lists what the files hold, whatever happened to the files or to it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from session_test_helpers import assistant, copy_sample, user

from apex_ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage
from apex_coding_agent.paths import default_session_dir
from apex_coding_agent.session import SessionManager
from apex_coding_agent.session.index import INDEX_ENV, SCHEMA_VERSION, SessionIndex, index_path
from apex_coding_agent.session.listing import SessionInfo, session_dirs, wait_for_index_builds
from apex_coding_agent.session.search import SearchError, fts_query, search_sessions


def _fields(infos: list[SessionInfo]) -> list[tuple[object, ...]]:
    return [
        (
            i.path,
            i.id,
            i.cwd,
            i.name,
            i.parent_session_path,
            i.created,
            i.modified,
            i.message_count,
            i.first_message,
            i.leaf_id,
            i.models,
            i.cost,
            i.all_messages_text,
        )
        for i in infos
    ]


def _scanned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """Every session as read from the files, without the index."""
    with monkeypatch.context() as m:
        m.setenv(INDEX_ENV, "off")
        return _fields(SessionManager.list_all())


def _indexed() -> list[tuple[object, ...]]:
    """Every session as listed with the index on; a first listing's background build is waited for."""
    listed = _fields(SessionManager.list_all())
    assert wait_for_index_builds(timeout=60)
    return listed


def _make(cwd: Path, question: str, answer: str, name: str | None = None) -> Path:
    sm = SessionManager.create(str(cwd))
    sm.append_message(user(question, ts=1_700_000_000_000))
    tool_call = ToolCall(id="c1", name="bash", arguments={"command": "grep -r needle ."})
    sm.append_message(
        AssistantMessage(
            content=[TextContent(text=answer), tool_call],
            api="anthropic-messages",
            provider="fake",
            model="fake-model",
            usage=Usage(input=1, output=1, total_tokens=2),
            stop_reason="toolUse",
            timestamp=1_700_000_001_000,
        )
    )
    sm.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="bash",
            content=[TextContent(text="haystack output line")],
            is_error=False,
            timestamp=1_700_000_002_000,
        )
    )
    if name is not None:
        sm.append_session_info(name)
    sm.close()
    assert sm.session_file is not None
    return sm.session_file


def _user_line(entry_id: str, text: str) -> str:
    """A user message line as another program might append it (no newline)."""
    message = {"role": "user", "content": text, "timestamp": 1_900_000_000_000}
    entry = {"type": "message", "id": entry_id, "parentId": None, "timestamp": "2030-01-01T00:00:00.000Z"}
    return json.dumps({**entry, "message": message})


@pytest.fixture
def sessions(tmp_path: Path) -> list[Path]:
    """Sessions of two projects, pi's own file, old-version files and files that are not sessions."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    made = [
        _make(here, "how do I parse TOML?", "Use tomllib", name="toml work"),
        _make(here, "why is the café slow", "Because of the cache"),
        _make(there, "rename a branch", "git branch -m"),
    ]
    other = default_session_dir(str(there))
    made.extend(copy_sample(sample, other) for sample in ("pi_print_text.jsonl", "v1.jsonl", "v2.jsonl", "v3.jsonl"))
    hostile = other / "hostile.jsonl"
    hostile.write_bytes(
        b'{"type":"session","version":3,"id":"hostile","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}\n'
        b'{"type":"message","id":"aa","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"lone \\udc00 surrogate \\u0001marker","timestamp":5}}\n'
        b'{"type":"message","id":"bb","parentId":"aa","timestamp":"2025-01-01T00:00:02.000Z",'
        b'"message":{"role":"user","content":"bad \xfe\xff bytes","timestamp":6}}\n'
        b"[1, 2]\nnull\n" + b"{" * 100_000 + b"\n"
    )
    made.append(hostile)
    (other / "notes.jsonl").write_text('{"hello": "not a session"}\n')
    (other / "empty.jsonl").write_text("")
    (other / "garbage.jsonl").write_bytes(b"\x00\xff not json\n")
    return made


def test_listing_through_the_index_is_the_listing_of_the_files(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _scanned(monkeypatch)
    assert (
        len(expected) == 8
    )  # 3 of ours, pi's, three old versions, a hostile one; the three non-sessions are not listed
    assert _indexed() == expected  # cold: the files are read and the index built after them
    assert index_path().is_file()
    assert _indexed() == expected  # warm
    pi = next(i for i in SessionManager.list_all() if i.path.name == "pi_print_text.jsonl")
    assert pi.first_message == "Say hello" and pi.message_count == 2 and pi.models == ("fake/fake-model",)
    hostile = next(i for i in SessionManager.list_all() if i.id == "hostile")
    assert hostile.first_message == "lone ? surrogate marker"  # stored as valid UTF-8, without snippet markers
    assert [h.session_id for h in search_sessions("surrogate")] == ["hostile"]


def test_a_first_listing_reads_the_files_and_leaves_a_whole_index_behind(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _scanned(monkeypatch)
    assert not index_path().exists()  # listing with the index turned off makes none
    assert _fields(SessionManager.list_all()) == expected  # the files, read while the index is built after them
    assert wait_for_index_builds(timeout=60)
    dirs = session_dirs()
    with SessionIndex.open() as index:
        indexed = {(f.dir, f.name) for f in index.sessions(dirs)}
        left = index.refresh(dirs)
    assert indexed == {(os.path.realpath(p.parent), p.name) for p in sessions}  # every session, each once
    assert (left.full, left.tail, left.dropped) == (0, 0, 0)  # nothing was left for a later listing to read
    assert _indexed() == expected  # warm, texts included
    assert [h.session_id for h in search_sessions("surrogate")] == ["hostile"]


def test_a_warm_refresh_reads_nothing_and_appends_are_read_from_their_tail(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs = session_dirs()
    with SessionIndex.open() as index:
        cold = index.refresh(dirs)
        assert cold.full == 11 and cold.tail == 0
        assert index.refresh(dirs).bytes_read == 0
    # Another program appends a message to one file: only the new bytes are read.
    target = sessions[2]
    line = _user_line("feedf00d", "an appended zebra question")
    with target.open("a") as handle:
        handle.write(line + "\n")
    with SessionIndex.open() as index:
        stats = index.refresh(dirs)
    assert (stats.full, stats.tail, stats.bytes_read) == (0, 1, len(line) + 1)
    assert _indexed() == _scanned(monkeypatch)
    newest = SessionManager.list_all()[0]
    assert newest.path == target and newest.leaf_id == "feedf00d" and "zebra" in newest.all_messages_text
    assert [h.entry_id for h in search_sessions("zebra")] == ["feedf00d"]


def test_rows_another_process_adds_during_a_first_listing_are_neither_lost_nor_doubled(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = sessions[-1].parent
    names = sorted(p.name for p in directory.iterdir())
    others = SessionIndex.open()

    def meanwhile(done: int, total: int) -> None:
        if done == 1:  # after our first read, before our commit: another process indexes two of the files
            for name in names[-2:]:
                others.refresh_file(directory / name)

    with SessionIndex.open() as index:
        listed = index.listing([directory], meanwhile)
    others.close()
    rows = [row[0] for rows in listed.values() for row in rows]
    assert sorted(rows) == sorted(set(rows))  # each session once
    assert _indexed() == _scanned(monkeypatch)
    with SessionIndex.open() as index:
        per_file = index.execute("SELECT name, count(*) FROM files GROUP BY dir, name HAVING count(*) > 1")
        assert per_file.fetchall() == []
        texts = index.execute("SELECT file, entry_id, count(*) FROM texts GROUP BY file, entry_id, kind, text "
                              "HAVING count(*) > 1")  # fmt: skip
        assert texts.fetchall() == []


def test_a_torn_last_line_is_read_once_it_is_whole(sessions: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    target = sessions[0]
    before = _indexed()
    whole = _user_line("0badc0de", "torn walrus text")
    with target.open("a") as handle:
        handle.write(whole[:30])
    assert _indexed() == before == _scanned(monkeypatch)  # half a line is no message, for either
    with target.open("a") as handle:
        handle.write(whole[30:] + "\n")
    after = _indexed()
    assert after == _scanned(monkeypatch)
    assert next(i for i in SessionManager.list_all() if i.path == target).message_count == 4
    assert len(search_sessions("walrus")) == 1


def test_rewritten_and_deleted_files(sessions: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _indexed()
    assert search_sessions("tomllib")
    # Rewritten in place by another program, shorter and different: read again from the start.
    sessions[0].write_text(sessions[1].read_text().replace("café", "bistro"))
    # Replaced by a new file (another inode) that is longer: read again too, not from the old tail.
    replacement = sessions[2].read_text() + sessions[2].read_text().splitlines(keepends=True)[1]
    tmp = sessions[2].with_suffix(".tmp")
    tmp.write_text(replacement.replace("rename a branch", "rename a tag"))
    os.replace(tmp, sessions[2])
    sessions[3].unlink()
    assert _indexed() == _scanned(monkeypatch)
    assert search_sessions("tomllib") == []
    assert search_sessions("rename branch") == [] and len(search_sessions("rename tag")) == 2  # the line twice
    assert {h.path for h in search_sessions("bistro")} == {sessions[0]}
    assert search_sessions("hello fake model") == []  # pi's file is gone, and so are its texts


@pytest.mark.parametrize("damage", ["deleted", "garbage", "truncated", "old_schema", "foreign_tables"])
def test_a_missing_or_broken_index_is_rebuilt_silently(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch, damage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    expected = _scanned(monkeypatch)
    assert _indexed() == expected
    path = index_path()
    if damage == "deleted":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    elif damage == "garbage":
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.write_bytes(os.urandom(8192))
    elif damage == "truncated":
        with SessionIndex.open() as index:
            index.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        path.write_bytes(path.read_bytes()[:3000])
    elif damage == "old_schema":
        conn = sqlite3.connect(path)
        conn.execute("DROP TABLE files")
        conn.execute("CREATE TABLE files(path TEXT)")  # what an older version might have had
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
        conn.commit()
        conn.close()
    else:  # the current schema number, but a table is missing: the first query fails and it is made again
        conn = sqlite3.connect(path)
        conn.execute("DROP TABLE meta")
        conn.commit()
        conn.close()
    assert _indexed() == expected
    assert len(search_sessions("tomllib")) == 1
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_an_index_of_a_newer_version_is_left_alone(sessions: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    assert _indexed() == _scanned(monkeypatch)  # listed from the files
    with pytest.raises(SearchError, match="newer version"):
        search_sessions("tomllib")
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_our_writer_updates_the_index_on_close_and_listers_read_the_tail_meanwhile(tmp_path: Path) -> None:
    SessionManager.list_all()  # the index exists from the first listing on; writers only update it
    sm = SessionManager.create(str(tmp_path))
    sm.append_message(user("first"))
    sm.append_message(assistant("second"))
    for n in range(300):
        sm.append_custom_entry("tick", {"n": n})
    assert sm.session_file is not None
    with SessionIndex.open() as index:
        assert index.sessions([sm.session_file.parent]) == []  # appends never touch the index
    listed = SessionManager.list_sessions(str(tmp_path))  # another reader meanwhile: reads the file, fills the row
    assert [(i.path, i.message_count) for i in listed] == [(sm.session_file, 2)]
    sm.append_message(user("octopus after the listing"))
    sm.close()
    with SessionIndex.open() as index:
        assert index.refresh(session_dirs()).bytes_read == 0  # nothing left to read: the writer told it on close
    assert search_sessions("octopus")[0].path == sm.session_file


def test_search_hits_name_the_entry_and_mark_the_match(sessions: list[Path]) -> None:
    hits = search_sessions("CAFE", per_session=True)
    assert len(hits) == 1
    hit = hits[0]
    assert hit.kind == "user" and hit.first_message == "why is the café slow"
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["café"]
    sm = SessionManager.open(hit.path)
    entry = sm.get_entry(hit.entry_id)
    assert entry is not None and "café" in json.dumps(entry.model_dump(), ensure_ascii=False)
    sm.close()
    assert [h.kind for h in search_sessions("needle")] == ["tool", "tool", "tool"]  # tool call arguments
    assert search_sessions("haystack") == []  # tool output is not indexed by default
    assert len(search_sessions("pars*")) == 1
    assert len(search_sessions('"how do I"')) == 1 and search_sessions('"do how I"') == []
    assert len(search_sessions("tomllib", cwd=str(sessions[0].parent.parent.parent.parent / "here"))) == 1
    assert search_sessions("tomllib", cwd="/nowhere") == []
    assert len(search_sessions("branch", limit=1)) == 1


def test_tool_output_is_searchable_after_a_reindex_that_asks_for_it(sessions: list[Path]) -> None:
    with SessionIndex.open() as index:
        index.reindex(session_dirs(), tool_output=True)
    assert len(search_sessions("haystack")) == 3
    with SessionIndex.open() as index:
        assert index.tool_output  # remembered for later refreshes
        index.reindex(session_dirs(), tool_output=False)
    assert search_sessions("haystack") == []


def test_the_tool_output_setting_reindexes_on_the_next_search_and_a_reindex_flag_overrides_it(
    sessions: list[Path], _agent_dir: Path
) -> None:
    def setting(value: bool) -> None:
        (_agent_dir / "settings.json").write_text(json.dumps({"sessionIndex": {"includeToolOutput": value}}))

    assert search_sessions("haystack") == []  # the default: tool output is not indexed
    setting(True)
    assert len(search_sessions("haystack")) == 3  # changed: re-indexed by this search, nothing else asked
    with SessionIndex.open() as index:
        assert index.tool_output and not index.follow_setting(True, session_dirs())  # once only
    setting(False)
    assert search_sessions("haystack") == []
    # `sessions reindex --tool-output` while the setting says no: the flag stands until the setting changes.
    with SessionIndex.open() as index:
        index.reindex(session_dirs(), tool_output=True, setting=False)
    assert len(search_sessions("haystack")) == 3
    assert len(search_sessions("haystack", include_tool_output=True)) == 3  # changed (to what the index holds)
    assert search_sessions("haystack", include_tool_output=False) == []  # changed again
    # A wrongly typed value is ignored (the settings check reports it elsewhere): the default, no tool output.
    (_agent_dir / "settings.json").write_text(json.dumps({"sessionIndex": {"includeToolOutput": "yes"}}))
    assert search_sessions("haystack") == []


@pytest.mark.parametrize("query", ["", "   ", "* - ()", '"', "AND OR NOT", "NEAR(a b)", "col:val", "^x"])
def test_any_typed_text_is_a_query_or_a_clear_error(sessions: list[Path], query: str) -> None:
    try:
        fts_query(query)
    except SearchError as exc:
        assert "Nothing to search for" in str(exc)
        return
    assert isinstance(search_sessions(query), list)


_WORKER = textwrap.dedent(
    """
    import sys
    from apex_coding_agent.session import SessionManager
    from apex_coding_agent.session.search import search_sessions
    from apex_ai.types import UserMessage, AssistantMessage, TextContent, Usage

    cwd, worker = sys.argv[1], int(sys.argv[2])
    for n in range(4):
        sm = SessionManager.create(cwd)
        sm.append_message(UserMessage(content=f"worker{worker} session{n} question", timestamp=1))
        sm.append_message(AssistantMessage(content=[TextContent(text="answer")], api="x", provider="p", model="m",
                          usage=Usage(), stop_reason="stop", timestamp=2))
        for k in range(20):
            sm.append_custom_entry("tick", {"k": k})
            if k % 5 == 0:
                SessionManager.list_sessions(cwd)
        sm.append_message(UserMessage(content=f"worker{worker} closing{n}", timestamp=3))
        sm.close()
        search_sessions(f"worker{worker}")
    """
)


def test_processes_writing_listing_and_searching_at_once_lose_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tmp_path), str(w)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        for w in range(3)
    ]
    for proc in workers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert err == b"" and out == b""  # no "database is locked", no warnings
    indexed = _indexed()
    assert indexed == _scanned(monkeypatch)
    assert len(indexed) == 12 and all(row[7] == 3 for row in indexed)
    for w in range(3):
        assert len(search_sessions(f"worker{w} closing*", limit=50)) == 4
    with SessionIndex.open() as index:
        texts = index.execute("SELECT count(*) FROM texts").fetchone()[0]
    assert texts == 12 * 3  # each message indexed exactly once


def test_an_agent_dir_where_no_index_can_be_made_still_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions_here = tmp_path / "custom"
    sm = SessionManager.create(str(tmp_path), sessions_here)
    sm.append_message(user("listed without an index"))
    sm.append_message(assistant("yes"))
    sm.close()
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the agent dir should be")
    monkeypatch.setenv("APEX_CODE_CODING_AGENT_DIR", str(blocker / "agent"))
    [info] = SessionManager.list_sessions(str(tmp_path), sessions_here)
    assert info.first_message == "listed without an index"
    with pytest.raises(SearchError, match="cannot be used"):
        search_sessions("listed", cwd=str(tmp_path), session_dir=sessions_here)


def test_a_word_in_very_many_messages_lists_the_newest_hits(
    sessions: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import apex_coding_agent.session.search as search

    ranked = search_sessions("needle")  # in every session's tool call: ranked by relevance
    monkeypatch.setattr(search, "RANKED_MATCHES", 2)  # as if it matched more messages than are worth ranking
    newest_first = search_sessions("needle", limit=2)
    assert len(ranked) == 3 and len(newest_first) == 2
    assert {h.entry_id for h in newest_first} <= {h.entry_id for h in ranked}
    assert newest_first[0].path == sessions[2]  # the last one indexed
