"""`read` and `write` (spec tools.md §3-4, acceptance 1-7)."""

import base64
import hashlib
import struct
import zlib
from pathlib import Path

import pytest

from apex_agent.tools import ToolExecutionError
from apex_ai.abort import AbortController
from apex_ai.types import ImageContent, TextContent
from apex_coding_agent.tools import ReadTool, ReadToolOptions, WriteTool
from apex_coding_agent.tools.read import NO_IMAGE_SUPPORT_NOTE


def _text(result: object) -> str:
    block = result.content[0]  # type: ignore[attr-defined]
    assert isinstance(block, TextContent)
    return block.text


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


@pytest.fixture
def big_file(tmp_path: Path) -> Path:
    path = tmp_path / "big.txt"
    path.write_text("\n".join(f"line {i}" for i in range(1, 3001)))
    return path


async def test_read_truncates_at_2000_lines(tmp_path: Path, big_file: Path) -> None:
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "big.txt"}, None, None)
    text = _text(result)
    body, notice = text.split("\n\n")
    assert body.split("\n") == [f"line {i}" for i in range(1, 2001)]
    assert notice == "[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_read_offset_and_limit(tmp_path: Path, big_file: Path) -> None:
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "big.txt", "offset": 2999, "limit": 1}, None, None)
    assert _text(result) == "line 2999\n\n[1 more lines in file. Use offset=3000 to continue.]"
    assert result.details is None
    tail = await ReadTool(str(tmp_path)).execute("c", {"path": "big.txt", "offset": 2999}, None, None)
    assert _text(tail) == "line 2999\nline 3000"


async def test_read_offset_beyond_end(tmp_path: Path, big_file: Path) -> None:
    with pytest.raises(ToolExecutionError, match=r"^Offset 5000 is beyond end of file \(3000 lines total\)$"):
        await ReadTool(str(tmp_path)).execute("c", {"path": "big.txt", "offset": 5000}, None, None)


async def test_read_truncates_by_bytes(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("\n".join("x" * 99 for _ in range(1000)))
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "wide.txt"}, None, None)
    # 100 bytes per line (with its newline) minus one for the first: 512 lines fit into 51200 bytes.
    assert _text(result).endswith("\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]")


async def test_read_first_line_over_limit(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("z" * 60 * 1024 + "\nsecond")
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "long.txt"}, None, None)
    assert _text(result) == "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c 51200]"
    assert result.details["truncation"]["firstLineExceedsLimit"] is True


async def test_read_png_image(tmp_path: Path) -> None:
    png = _png()
    (tmp_path / "pic.png").write_bytes(png)
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "pic.png"}, None, None)
    assert _text(result) == "Read image file [image/png]"
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png

    text_only = ReadTool(str(tmp_path), ReadToolOptions(supports_images=lambda: False))
    result = await text_only.execute("c", {"path": "pic.png"}, None, None)
    assert _text(result) == "Read image file [image/png]\n" + NO_IMAGE_SUPPORT_NOTE


async def test_read_binary_file_gives_notice(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02garbage" * 10)
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "blob.bin"}, None, None)
    assert _text(result).startswith("blob.bin looks like a binary file (100B) and is not shown.")


async def test_read_at_prefix_and_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print('a')\n")
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "@src/a.py"}, None, None)
    assert _text(result) == "print('a')\n"
    home = tmp_path / "home"
    home.mkdir()
    (home / "x").write_text("from home")
    monkeypatch.setenv("HOME", str(home))
    result = await ReadTool("/").execute("c", {"path": "~/x"}, None, None)
    assert _text(result) == "from home"


async def test_read_unicode_space_fallback(tmp_path: Path) -> None:
    (tmp_path / "Shot 10.00.00\u202fAM.png.txt").write_text("found")
    result = await ReadTool(str(tmp_path)).execute("c", {"path": "Shot 10.00.00 AM.png.txt"}, None, None)
    assert _text(result) == "found"


async def test_read_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ToolExecutionError, match="ENOENT: no such file or directory"):
        await ReadTool(str(tmp_path)).execute("c", {"path": "nope.txt"}, None, None)


async def test_read_aborted(tmp_path: Path, big_file: Path) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolExecutionError, match="^Operation aborted$"):
        await ReadTool(str(tmp_path)).execute("c", {"path": "big.txt"}, controller.signal, None)


async def test_write_creates_directories(tmp_path: Path) -> None:
    result = await WriteTool(str(tmp_path)).execute("c", {"path": "a/b/c.txt", "content": "hello"}, None, None)
    assert _text(result) == "Successfully wrote 5 bytes to a/b/c.txt"
    assert (tmp_path / "a/b/c.txt").read_text() == "hello"
    assert result.details == {"byteCount": 5, "contentHash": hashlib.sha256(b"hello").hexdigest()}


async def test_write_reports_string_length_but_counts_utf8_bytes(tmp_path: Path) -> None:
    result = await WriteTool(str(tmp_path)).execute("c", {"path": "u.txt", "content": "héllo"}, None, None)
    assert _text(result) == "Successfully wrote 5 bytes to u.txt"
    assert result.details["byteCount"] == 6
    assert (tmp_path / "u.txt").read_bytes() == "héllo".encode()
