"""Rewind with the conversation, across a resumed session and a fork; an interrupted restore; blob collection."""

from __future__ import annotations

import os
import time

import pytest
from checkpoint_helpers import tree, turn, user_entries
from runtime_helpers import Harness

from apex_ai.types import UserMessage
from apex_coding_agent.checkpoints import BlobStore, collect_garbage, collect_unreferenced_blobs
from apex_coding_agent.checkpoints.manager import blob_dir
from apex_coding_agent.session import SessionManager


def _user_texts(messages: list[object]) -> list[str]:
    return [
        m.content if isinstance(m.content, str) else m.content[0].text for m in messages if isinstance(m, UserMessage)
    ]  # type: ignore[union-attr]


async def test_rewinding_the_conversation_and_files_then_redo(harness: Harness) -> None:
    session = await harness.session(manager=harness.persisted_manager())
    await turn(harness, session, "one", ("write", {"path": "a.txt", "content": "1"}))
    await turn(harness, session, "two", ("bash", {"command": "echo 2 > a.txt && echo b > b.txt"}))
    before_redo = tree(harness.cwd)
    _, second = user_entries(session)

    result = await session.checkpoints.rewind(second)
    assert result.editor_text == "two"
    assert _user_texts(session.messages) == ["one"]
    assert tree(harness.cwd) == {"a.txt": b"1"}

    await session.checkpoints.redo()
    assert _user_texts(session.messages) == ["one", "two"]
    assert tree(harness.cwd) == before_redo

    # Conversation only: the files stay.
    await session.checkpoints.rewind(second, mode="conversation")
    assert _user_texts(session.messages) == ["one"]
    assert tree(harness.cwd) == before_redo


async def test_a_redone_conversation_is_where_the_session_reopens(harness: Harness) -> None:
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager)
    await turn(harness, session, "one", ("write", {"path": "a.txt", "content": "1"}))
    await turn(harness, session, "two", ("write", {"path": "a.txt", "content": "2"}))
    _, second = user_entries(session)
    await session.checkpoints.rewind(second)
    await session.checkpoints.redo()
    in_memory = _user_texts(session.messages)
    path = manager.session_file
    assert path is not None
    session.dispose()
    manager.close()

    resumed = await harness.session(manager=SessionManager.open(path, harness.sessions_dir))
    assert _user_texts(resumed.messages) == in_memory == ["one", "two"]
    assert not resumed.checkpoints.can_redo
    assert (harness.cwd / "a.txt").read_text() == "2"


async def test_rewind_after_resuming_and_in_a_fork(harness: Harness) -> None:
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager)
    await turn(harness, session, "one", ("write", {"path": "a.txt", "content": "1"}))
    await turn(harness, session, "two", ("edit", {"path": "a.txt", "edits": [{"oldText": "1", "newText": "2"}]}))
    path = manager.session_file
    assert path is not None
    session.dispose()
    manager.close()

    fork = SessionManager.fork_from(path, str(harness.cwd), harness.sessions_dir)
    reopened = SessionManager.open(path, harness.sessions_dir)
    resumed = await harness.session(manager=reopened)
    _, second = user_entries(resumed)
    await resumed.checkpoints.rewind(second, mode="files")
    assert (harness.cwd / "a.txt").read_text() == "1"
    await resumed.checkpoints.redo()
    assert (harness.cwd / "a.txt").read_text() == "2"
    resumed.dispose()
    reopened.close()

    forked = await harness.session(manager=fork)
    first, _ = user_entries(forked)
    result = await forked.checkpoints.rewind(first, mode="files")
    assert result.restored == ["a.txt"]
    assert not (harness.cwd / "a.txt").exists()


@pytest.mark.parametrize("action", ["complete", "revert"])
async def test_an_interrupted_restore_is_completed_or_reverted_on_the_next_start(harness: Harness, action: str) -> None:
    manager = harness.persisted_manager()
    session = await harness.session(manager=manager)
    names = [f"f{i}.txt" for i in range(6)]
    for name in names:
        (harness.cwd / name).write_text(f"original {name}")
    await turn(harness, session, "go", *[("write", {"path": n, "content": f"agent {n}"}) for n in names])
    agent_state = tree(harness.cwd)
    [entry] = user_entries(session)

    done: list[str] = []

    def crash_after_two(path: str) -> None:
        done.append(path)
        if len(done) == 2:
            raise KeyboardInterrupt  # the process is cut off mid-restore

    session.checkpoints.on_restore_file = crash_after_two
    with pytest.raises(KeyboardInterrupt):
        await session.checkpoints.rewind(entry, mode="files")
    assert len([n for n in names if (harness.cwd / n).read_text().startswith("original")]) == 2
    assert manager.session_file is not None
    session.dispose()
    manager.close()

    again = await harness.session(manager=SessionManager.open(manager.session_file, harness.sessions_dir))
    assert again.checkpoints.pending_restore
    written, conflicts = again.checkpoints.recover("complete" if action == "complete" else "revert")
    assert conflicts == []
    assert len(written) == (4 if action == "complete" else 2)
    assert not again.checkpoints.pending_restore
    if action == "complete":
        assert tree(harness.cwd) == {n: f"original {n}".encode() for n in names}
    else:
        assert tree(harness.cwd) == agent_state


async def test_gc_keeps_blobs_a_session_refers_to_and_removes_the_rest(harness: Harness) -> None:
    (harness.cwd / "a.txt").write_text("kept by the session")
    session = await harness.session(manager=harness.persisted_manager())
    await turn(harness, session, "go", ("write", {"path": "a.txt", "content": "new"}))
    store = BlobStore(blob_dir(harness.agent_dir))
    orphan = store.put(b"no session refers to me")
    fresh = store.put(b"stored a moment ago by a running session")
    old = time.time() - 7200
    for digest, path in store.digests():
        if digest != fresh:
            os.utime(path, (old, old))

    report = collect_garbage(store, [harness.sessions_dir])
    assert report.removed == 1
    assert not store.has(orphan)
    assert store.has(fresh)
    [entry] = user_entries(session)
    await session.checkpoints.rewind(entry, mode="files")
    assert (harness.cwd / "a.txt").read_text() == "kept by the session"


async def test_gc_reads_every_folder_a_checkpointing_session_was_written_in(harness: Harness) -> None:
    # The session lives outside <agentDir>/sessions (as with --session-dir or a project's sessionDir) and the gc
    # below is not told about that folder: the folder was recorded when the session stored its first checkpoint.
    (harness.cwd / "a.txt").write_text("before")
    session = await harness.session(manager=harness.persisted_manager())
    await turn(harness, session, "go", ("write", {"path": "a.txt", "content": "after"}))
    assert not str(harness.sessions_dir).startswith(str(harness.agent_dir))
    report = collect_unreferenced_blobs(harness.agent_dir, grace_seconds=0)
    assert report.removed == 0 and report.kept >= 1
    [entry] = user_entries(session)
    await session.checkpoints.rewind(entry, mode="files")
    assert (harness.cwd / "a.txt").read_text() == "before"


async def test_gc_removes_nothing_while_a_session_file_cannot_be_read(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await harness.session(manager=harness.persisted_manager())
    await turn(harness, session, "go", ("write", {"path": "a.txt", "content": "new"}))
    store = BlobStore(blob_dir(harness.agent_dir))
    store.put(b"no session refers to me")
    unreadable = session.session_manager.session_file
    assert unreadable is not None
    real_open = open

    def failing_open(path: object, *args: object, **kwargs: object) -> object:
        if str(path) == str(unreadable):  # as root no file mode stops a read: the I/O error is simulated here
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", failing_open)
    before = sorted(digest for digest, _ in store.digests())
    report = collect_unreferenced_blobs(harness.agent_dir, [harness.sessions_dir], grace_seconds=0)
    monkeypatch.undo()
    assert report.removed == 0 and report.unreadable == (str(unreadable),)
    assert sorted(digest for digest, _ in store.digests()) == before
    (harness.sessions_dir / "odd.jsonl").mkdir()  # a folder with a session's name is no session: gc goes on
    assert collect_unreferenced_blobs(harness.agent_dir, [harness.sessions_dir], grace_seconds=0).removed == 1


async def test_a_turn_whose_manifest_was_left_on_a_side_branch_still_rewinds(harness: Harness) -> None:
    from apex_coding_agent.session.entries import MessageEntry

    session = await harness.session()
    await turn(harness, session, "one", ("write", {"path": "a.txt", "content": "1"}))
    await turn(harness, session, "two", ("write", {"path": "b.txt", "content": "2"}))
    last_reply = [e for e in session.session_manager.get_branch() if isinstance(e, MessageEntry)][-1]
    await session.navigate_tree(last_reply.id)  # the turn's manifest (written after it) is now off the branch
    await turn(harness, session, "three", ("write", {"path": "c.txt", "content": "3"}))
    _, second, _ = user_entries(session)
    assert [p.files for p in session.checkpoints.get_checkpoints()] == [["a.txt"], ["b.txt"], ["c.txt"]]
    await session.checkpoints.rewind(second)
    assert tree(harness.cwd) == {"a.txt": b"1"}
