"""Framing of RPC input and output (spec modes.md §7, acceptance check 10)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading

from hypothesis import given
from hypothesis import strategies as st

from apex_coding_agent.modes.rpc.jsonl import JsonlWriter, LineDecoder, OversizedLine, dumps_line


def test_splits_on_lf_only_and_keeps_unicode_line_separators() -> None:
    decoder = LineDecoder()
    text = '{"type":"prompt","message":"a\u2028b\u2029c\x85d\x0be\x0cf"}\n'
    assert decoder.feed(text.encode()) == [text[:-1]]
    assert decoder.finish() == []


def test_strips_exactly_one_trailing_cr() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"a\r\nb\r\r\nc\n") == ["a", "b\r", "c"]


def test_multibyte_character_split_across_chunks() -> None:
    decoder = LineDecoder()
    data = "é€😀\n".encode()
    lines: list[str] = []
    for byte in data:
        lines += decoder.feed(bytes([byte]))
    assert lines == ["é€😀"]


def test_final_unterminated_line_is_a_record() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'{"type":"get_state"}\n{"type":"abort"}') == ['{"type":"get_state"}']
    assert decoder.finish() == ['{"type":"abort"}']
    assert decoder.finish() == []
    tail = LineDecoder()
    assert tail.feed(b"a\n\r") == ["a"]
    assert tail.finish() == []  # a lone CR after the last LF is not a record


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert LineDecoder().feed(b"\xff\xfe{\n") == ["\ufffd\ufffd{"]


def test_empty_lines_are_records() -> None:
    assert LineDecoder().feed(b"\n\n") == ["", ""]


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n")), max_size=8), st.data())
def test_any_chunking_yields_the_same_records(records: list[str], data: st.DataObject) -> None:
    payload = "".join(r + "\n" for r in records).encode("utf-8", errors="surrogatepass")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(payload)), max_size=6)))
    decoder = LineDecoder()
    out: list[str] = []
    start = 0
    for cut in [*cuts, len(payload)]:
        out += decoder.feed(payload[start:cut])
        start = cut
    out += decoder.finish()
    expected = [r.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace") for r in records]
    assert out == [e[:-1] if e.endswith("\r") else e for e in expected]


def test_output_is_compact_and_unescaped() -> None:
    assert dumps_line({"a": "é😀", "b": [1, None]}) == '{"a":"é😀","b":[1,null]}\n'.encode()


def test_output_escapes_unicode_line_separators() -> None:
    line = dumps_line({"a": "x\u2028y\u2029"})
    assert line == b'{"a":"x\\u2028y\\u2029"}\n'
    assert line.decode().splitlines() == [line.decode()[:-1]]
    assert json.loads(line) == {"a": "x\u2028y\u2029"}


def test_lone_surrogate_falls_back_to_ascii_escapes() -> None:
    line = dumps_line({"id": "\ud800"})
    assert line == b'{"id":"\\ud800"}\n'
    assert json.loads(line) == {"id": "\ud800"}


async def test_concurrent_writers_never_interleave() -> None:
    sink = io.BytesIO()
    writer = JsonlWriter(sink)

    def produce(n: int) -> None:
        for i in range(200):
            writer.write({"writer": n, "i": i, "pad": "x" * 500})

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert await writer.flush()
    lines = sink.getvalue().split(b"\n")
    assert lines[-1] == b""
    parsed = [json.loads(line) for line in lines[:-1]]
    assert len(parsed) == 800
    for n in range(4):
        assert [p["i"] for p in parsed if p["writer"] == n] == list(range(200))


async def test_writer_stops_quietly_on_broken_pipe() -> None:
    class Broken(io.BytesIO):
        def write(self, data: object, /) -> int:
            raise BrokenPipeError

    writer = JsonlWriter(Broken())
    writer.write({"a": 1})
    assert not await writer.flush()
    assert writer.closed
    writer.write({"a": 2})


def test_a_line_over_the_cap_is_skipped_with_its_size() -> None:
    decoder = LineDecoder(max_line=10)
    records: list[object] = []
    for chunk in (b'{"a":1}\n' + b"x" * 7, b"y" * 20, b"z" * 5 + b"\r\n", b"0123456789\r\n", b"01234567890\n"):
        records += decoder.feed(chunk)
    records += decoder.feed(b"w" * 30)
    records += decoder.finish()
    assert records == ['{"a":1}', OversizedLine(32), "0123456789", OversizedLine(11), OversizedLine(30)]


def test_the_decoder_buffers_no_more_than_the_cap() -> None:
    decoder = LineDecoder(max_line=1000)
    for _ in range(100):
        assert decoder.feed(b"x" * 500) == []
        assert decoder.buffered <= 1001 + 500
    assert decoder.feed(b"\n{}\n") == [OversizedLine(50_000), "{}"]


async def test_a_client_that_reads_nothing_never_blocks_write_and_flush_gives_up() -> None:
    read_end, write_end = os.pipe()
    try:
        writer = JsonlWriter(open(write_end, "wb", buffering=0, closefd=False))
        record = {"pad": "x" * 4096}
        for _ in range(1000):  # ~4 MB: far more than the pipe holds
            writer.write(record)
        assert writer.congested()
        assert not await writer.flush(stall=0.2)
        assert writer.closed and writer.queued_bytes == 0
    finally:
        os.close(read_end)
        os.close(write_end)


async def test_drained_returns_once_the_client_caught_up() -> None:
    read_end, write_end = os.pipe()
    sink = open(write_end, "wb", buffering=0)
    writer = JsonlWriter(sink)
    for _ in range(1000):
        writer.write({"pad": "x" * 4096})
    assert writer.congested()
    waiter = asyncio.ensure_future(writer.drained())
    await asyncio.sleep(0.05)
    assert not waiter.done()  # nothing was read yet
    reader = threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(read_end, 1 << 16), b"")])
    reader.start()
    await asyncio.wait_for(waiter, 5)
    assert not writer.congested()
    assert await writer.flush()
    sink.close()
    reader.join()
    os.close(read_end)


async def test_small_records_to_a_client_that_reads_nothing_never_block_either() -> None:
    # Small records are written at once while the pipe has room; once it is full they must queue, not block.
    read_end, write_end = os.pipe()
    try:
        writer = JsonlWriter(open(write_end, "wb", buffering=0, closefd=False))
        done = threading.Event()

        def produce() -> None:
            for i in range(100_000):  # ~2 MB of small lines: far more than the pipe holds
                writer.write({"i": i})
            done.set()

        threading.Thread(target=produce, daemon=True).start()
        assert await asyncio.to_thread(done.wait, 30), "write blocked on a full pipe"
        assert writer.congested()
        assert not await writer.flush(stall=0.2)
    finally:
        os.close(read_end)
        os.close(write_end)


async def test_small_and_large_records_keep_their_order_through_a_slow_reader() -> None:
    # Records of at most PIPE_BUF bytes may be written at once, larger ones by the thread: the order must hold.
    read_end, write_end = os.pipe()
    writer = JsonlWriter(open(write_end, "wb", buffering=0, closefd=False))
    received = bytearray()

    def slow_reader() -> None:
        while chunk := os.read(read_end, 1000):
            received.extend(chunk)

    reader = threading.Thread(target=slow_reader, daemon=True)
    reader.start()
    for i in range(400):
        writer.write({"i": i, "pad": "x" * (9000 if i % 3 == 0 else 10)})
    assert await writer.flush()
    os.close(write_end)
    reader.join(10)
    os.close(read_end)
    assert [json.loads(line)["i"] for line in bytes(received).splitlines()] == list(range(400))
