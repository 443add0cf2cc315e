"""Only regular files are session files; one writer per session, locked from `lock_for_writing` on; one file per
id; a failed write changes nothing on disk and raises `SessionWriteError`; old files migrate without warnings."""

from __future__ import annotations

import logging
import os
import resource
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from session_test_helpers import assistant, copy_sample, read_lines, user

from apex_coding_agent.session.file_errors import (
    NotARegularFileError,
    SessionFileError,
    SessionLockedError,
    SessionWriteError,
)
from apex_coding_agent.session.scanner import read_session_file
from apex_coding_agent.session.session_manager import SessionManager


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _null_twin(path: Path) -> None:
    # mknod needs root; otherwise a symlink to /dev/null stands in (followed, so it is the device either way).
    if os.geteuid() == 0:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        path.symlink_to("/dev/null")


@pytest.mark.parametrize("make", [_fifo, _directory, _null_twin], ids=["fifo", "directory", "char device"])
def test_open_refuses_what_is_not_a_regular_file_without_reading_or_touching_it(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    node = tmp_path / "node.jsonl"
    make(node)
    before = os.stat(node)
    with pytest.raises(NotARegularFileError, match=r"is a (FIFO|directory|character device)") as info:
        SessionManager.open(node)
    assert info.value.path == node
    with pytest.raises(NotARegularFileError):
        read_session_file(node)
    after = os.stat(node)
    assert (stat.S_IFMT(after.st_mode), after.st_ino, after.st_rdev) == (
        stat.S_IFMT(before.st_mode),
        before.st_ino,
        before.st_rdev,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node.jsonl"]  # no temp file, no lock left
    assert SessionManager.list_sessions(str(tmp_path), tmp_path) == []


def test_empty_file_through_a_symlink_gets_its_header_and_the_link_stays(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    sm = SessionManager.open(link)
    sm.append_message(user("hi"))
    sm.close()
    assert link.is_symlink() and os.readlink(link) == target.name
    assert [r["type"] for r in read_lines(target)] == ["session", "message"]


def test_a_dangling_symlink_is_followed_when_the_session_is_created(tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "later.jsonl")
    sm = SessionManager.open(link)
    sm.lock_for_writing()
    sm.append_message(user("hi"))
    sm.append_message(assistant("hello"))
    sm.close()
    assert link.is_symlink() and [r["type"] for r in read_lines(tmp_path / "later.jsonl")] == [
        "session",
        "message",
        "message",
    ]


def test_a_v1_file_migrates_without_warnings_and_through_a_symlink(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    target = copy_sample("v1.jsonl", tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with caplog.at_level(logging.WARNING):
        sm = SessionManager.open(link)
    assert caplog.records == [] and sm.issues == []
    assert link.is_symlink() and read_lines(target)[0]["version"] == 3
    assert len(sm.get_entries()) == 6


_HOLDER = """
import sys, time
from apex_coding_agent.session.session_manager import SessionManager
sm = SessionManager.open(sys.argv[1])
sm.lock_for_writing()
print("locked", flush=True)
time.sleep(60)
"""


def test_lock_for_writing_refuses_a_second_writer_at_once_and_a_killed_holder_does_not_block(tmp_path: Path) -> None:
    path = copy_sample("pi_print_text.jsonl", tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        sm = SessionManager.open(path)  # reading is fine
        with pytest.raises(SessionLockedError, match=rf"in use by process {holder.pid}"):
            sm.lock_for_writing()
        assert (tmp_path / "pi_print_text.jsonl.lock").exists()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    # The SIGKILLed holder left its sidecar behind, but its flock died with it.
    assert (tmp_path / "pi_print_text.jsonl.lock").exists()
    sm = SessionManager.open(path)
    sm.lock_for_writing()
    sm.append_message(user("mine now"))
    sm.close()
    assert read_lines(path)[-1]["message"]["content"][0]["text"] == "mine now"
    assert not (tmp_path / "pi_print_text.jsonl.lock").exists()


def test_a_missing_path_is_claimed_at_lock_time(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    first = SessionManager.open(path)
    first.lock_for_writing()
    second = SessionManager.open(path)
    with pytest.raises(SessionLockedError, match=rf"in use by process {os.getpid()}"):
        second.lock_for_writing()
    first.close()
    second.lock_for_writing()
    second.close()


def test_a_chosen_id_is_locked_before_its_file_exists(tmp_path: Path) -> None:
    first = SessionManager.create(str(tmp_path), tmp_path, id="same")
    first.lock_for_writing()
    second = SessionManager.create(str(tmp_path), tmp_path, id="same")
    with pytest.raises(SessionLockedError, match=r"Session id same is in use by process"):
        second.lock_for_writing()
    first.close()
    assert not (tmp_path / "same.id.lock").exists()
    second.lock_for_writing()
    second.close()


def test_one_id_never_gets_two_files(tmp_path: Path) -> None:
    first = SessionManager.create(str(tmp_path), tmp_path, id="same")
    first.append_message(user("one"))
    first.append_message(assistant("answer"))
    first.close()
    second = SessionManager.create(str(tmp_path), tmp_path, id="same")  # not looked up: a caller's mistake
    second.append_message(user("two"))
    with pytest.raises(SessionFileError, match=r"A session with id same already exists"):
        second.append_message(assistant("answer"))
    second.close()
    assert len(list(tmp_path.glob("*_same.jsonl"))) == 1


def _capped(limit: int) -> tuple[int, int]:
    """Cap this process's file size at `limit` (Python ignores SIGXFSZ: a write past it fails with EFBIG)."""
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    return old


def test_a_failed_append_raises_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = copy_sample("pi_print_text.jsonl", tmp_path)
    sm = SessionManager.open(path)
    sm.lock_for_writing()
    before = path.read_bytes()
    leaf = sm.get_leaf_id()
    old = _capped(len(before) + 10)
    try:
        with pytest.raises(SessionWriteError, match=rf"Could not write session file {path}: File too large"):
            sm.append_message(user("x" * 100))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    assert path.read_bytes() == before  # the partial line was cut off
    assert sm.get_leaf_id() == leaf  # nor is the entry in the tree
    sm.append_message(user("after"))
    sm.close()
    reopened = SessionManager.open(path)
    assert reopened.issues == [] and read_lines(path)[-1]["message"]["content"][0]["text"] == "after"


def test_a_failed_creation_removes_the_half_written_file(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path), tmp_path)
    sm.append_message(user("x" * 500))
    old = _capped(300)
    try:
        with pytest.raises(SessionWriteError, match="File too large"):
            sm.append_message(assistant("answer"))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
    assert list(tmp_path.glob("*.jsonl")) == [] and list(tmp_path.glob("*.lock")) == []
    sm.append_message(assistant("again"))  # room again: created now, with everything so far
    sm.close()
    assert sm.session_file is not None
    assert [r["type"] for r in read_lines(sm.session_file)] == ["session", "message", "message"]
