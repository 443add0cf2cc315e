"""Block-wise file scanning: any block size indexes a file exactly as scanning its bytes at once does."""

from __future__ import annotations

import gc
import json
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from apex_coding_agent.session.scanner import LoadedFile, read_session_file, scan_bytes
from apex_coding_agent.session.session_manager import SessionManager

HEADER = b'{"type":"session","version":3,"id":"blk","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/w"}'


def _entry(n: int, body: str = "x") -> bytes:
    parent = "null" if n == 0 else f'"{n - 1:08x}"'
    return (
        f'{{"type":"custom","id":"{n:08x}","parentId":{parent},"timestamp":"2025-06-01T10:00:00.000Z",'
        f'"customType":"t","data":{json.dumps(body)}}}'
    ).encode()


_LINES = st.one_of(
    st.builds(_entry, st.integers(0, 50), st.text(max_size=300)),
    st.sampled_from(
        [
            b"",
            b"   ",
            b"{not json",
            b"[1, 2]",
            b'{"id":"slow01","type":"custom","parentId":null,"timestamp":"t","customType":"s"}',
            b'{"type":"custom","id":"bad","parentId":null,"timestamp":"t",oops}',
        ]
    ),
)


def _summary(loaded: LoadedFile) -> tuple[object, ...]:
    return (
        loaded.size,
        loaded.header,
        loaded.header_raw,
        [(r.type, r.id, r.parent_id, r.timestamp, r.line_no, r.raw) for r in loaded.records],
        [(k.line_no, k.raw) for k in loaded.kept_lines],
        [str(i).split(": ", 1)[1] for i in loaded.issues],
        [i.line_no for i in loaded.issues],
        loaded.ends_with_newline,
    )


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(_LINES, max_size=12),
    crlf=st.booleans(),
    trailing_newline=st.booleans(),
    block=st.sampled_from([1, 2, 7, 64, 257, 4096]),
)
def test_any_block_size_indexes_like_the_whole_buffer(
    lines: list[bytes], crlf: bool, trailing_newline: bool, block: int
) -> None:
    newline = b"\r\n" if crlf else b"\n"
    data = newline.join([HEADER, *lines]) + (newline if trailing_newline else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(data)
        assert _summary(read_session_file(path, block)) == _summary(scan_bytes(path, data))


def test_a_line_longer_than_the_block_and_a_torn_tail(tmp_path: Path) -> None:
    long = _entry(1, "y" * 10_000)
    data = HEADER + b"\n" + _entry(0) + b"\n" + long + b"\n" + _entry(2)[:-5]
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    loaded = read_session_file(path, 16)
    assert [r.raw for r in loaded.records] == [_entry(0), long]
    assert [str(i).split(": ")[:2] for i in loaded.issues] == [[f"{path}:4", "not valid JSON"]]
    assert loaded.kept_lines[0].raw == _entry(2)[:-5] and not loaded.ends_with_newline


def test_non_session_file_stops_early(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello":"world"}\n' * 1000)
    loaded = read_session_file(path, 64)
    assert loaded.header is None and loaded.records == [] and loaded.size > 0


def test_records_read_the_inode_that_was_scanned(tmp_path: Path) -> None:
    """A file replaced by rename after opening (another writer rewriting it) does not change what we read."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + b"\n" + _entry(0, "first") + b"\n" + _entry(1, "second") + b"\n")
    sm = SessionManager.open(path)
    replacement = tmp_path / "other.jsonl"
    replacement.write_bytes(HEADER + b"\n" + _entry(0, "changed!!") + b"\n")
    replacement.replace(path)
    entry = sm.get_entry("00000001")
    assert entry is not None and getattr(entry, "data", None) == "second"
    assert sm.issues == []


def _fds_on(path: Path) -> int:
    """Descriptors of this process open on `path`.

    Counting every descriptor would also see sessions of earlier tests being collected (their finalizers close
    read descriptors) during the test; only descriptors resolving to this test's file are ours.
    """
    target = os.path.realpath(path)
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == target:
                count += 1
        except OSError:  # closed between listdir and readlink (the listing descriptor itself, or a finalizer)
            continue
    return count


def test_the_read_descriptor_lives_as_long_as_the_records(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + b"\n" + b"\n".join(_entry(n, f"body {n}") for n in range(20)) + b"\n")
    assert _fds_on(path) == 0  # a fresh file: no earlier test can hold it
    sm = SessionManager.open(path)
    assert _fds_on(path) == 1
    sm.close()  # releasing the file for writing keeps the lines readable
    entry = sm.get_entry("00000013")
    assert entry is not None and getattr(entry, "data", None) == "body 19"
    assert _fds_on(path) == 1
    del sm, entry
    gc.collect()
    assert _fds_on(path) == 0
