"""Keeping a file in the blob store (`put_file`) and the cap on what a session keeps ahead of `bash` commands."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from apex_coding_agent.checkpoints.blobs import BlobStore, content_hash
from apex_coding_agent.checkpoints.scan import BASELINE_FULL, ProjectScanner


def test_a_kept_file_is_its_content_whatever_the_file_system(tmp_path: Path) -> None:
    """A reflink clone where the file system can make one, a copy elsewhere: the blob is the content either way, and
    a later in-place write to the file never reaches it (the reason hard links are not used)."""
    store = BlobStore(tmp_path / "blobs")
    source = tmp_path / "data.bin"
    contents = [b"", b"small\n", os.urandom(3 << 20)]
    digests = []
    for data in contents:
        source.write_bytes(data)
        digest = store.put_file(str(source))
        assert digest == content_hash(data)
        digests.append(digest)
        with open(source, "r+b") as handle:  # in place: same inode
            handle.write(b"CHANGED")
    assert [store.get(d) for d in digests] == contents
    assert store.clones is not None  # tried once: made a clone, or knows the file system cannot
    assert store.put_file(str(source)) == content_hash(source.read_bytes())
    assert not list((tmp_path / "blobs").rglob(".tmp-*"))  # no temp file left behind


def test_only_regular_files_are_kept_and_a_fifo_never_blocks(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    (tmp_path / "real").write_text("real\n")
    os.symlink(tmp_path / "real", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    outcome: list[BaseException] = []

    def keep_fifo() -> None:
        try:
            store.put_file(str(tmp_path / "fifo"))
        except OSError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=keep_fifo, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and len(outcome) == 1
    with pytest.raises(OSError):
        store.put_file(str(tmp_path / "link"))
    with pytest.raises(OSError):
        store.put_file(str(tmp_path / "missing"))


def test_files_past_the_session_cap_are_reported_when_a_command_changes_them(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    for index in range(10):
        (root / f"f{index}.txt").write_text(f"{index}" * 300)
    scanner = ProjectScanner(str(root), BlobStore(tmp_path / "blobs"), 1 << 20, max_baseline_bytes=1_000)
    state = scanner.before()  # the first scan keeps what fits: 3 files of 300 bytes
    assert 900 <= scanner.baseline_bytes <= 1_000
    for index in range(10):
        (root / f"f{index}.txt").write_text("changed")
    changes = scanner.after(state)
    assert len(changes) == 10
    kept = [c for c in changes if c.unknown is None]
    capped = [c for c in changes if c.unknown is not None]
    assert len(kept) == 3 and all(scanner.store.get(c.before or "") == c.path[1].encode() * 300 for c in kept)
    assert len(capped) == 7
    assert {c.unknown for c in capped} == {BASELINE_FULL} and {c.size for c in capped} == {300}
