"""HTML export: content and order of the active branch, escaping, images, default paths, pi and old files."""

from __future__ import annotations

import base64
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from export_test_helpers import DATA, PNG_1X1, assistant, build_session, tool_result

from apex_ai.types import ImageContent, TextContent, ToolCall, UserMessage
from apex_coding_agent.export import ExportError, default_html_path, export_session_html
from apex_coding_agent.session.session_manager import SessionManager


class _Collector(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        else:
            self.text.append(data)


def _parse(document: str) -> _Collector:
    collector = _Collector()
    collector.feed(document)
    collector.close()
    return collector


def _assert_in_order(haystack: str, needles: list[str]) -> None:
    pos = 0
    for needle in needles:
        found = haystack.find(needle, pos)
        assert found >= 0, f"{needle!r} missing after position {pos}"
        pos = found + len(needle)


def _transcript(document: str) -> str:
    return document.split('<div class="transcript">', 1)[1]


def test_export_shows_the_active_branch_in_order(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path / "proj"))
    texts = build_session(sm)
    out = export_session_html(sm, tmp_path / "out.html")
    assert out == tmp_path / "out.html"
    document = out.read_text(encoding="utf-8")
    header, body = document.split('<div class="transcript">', 1)
    for value in (sm.session_id, str(tmp_path / "proj"), texts["name"], "fake/fake-model", str(sm.session_file)):
        assert value in header
    _assert_in_order(
        body,
        [
            "Model: fake/fake-model",
            "Thinking level: high",
            texts["user"],
            texts["thinking"],
            "I will run the <strong>tests</strong> first.",
            "$ " + texts["command"],
            texts["output"],
            texts["edit_path"],
            texts["diff_del"],
            texts["diff_add"],
            "$ " + texts["bash"],
            texts["bash_output"],
            texts["custom"],
            texts["compaction"],
            texts["branch"],
            texts["final"],
            texts["error"],
            texts["second_user"],
            "Session name: " + texts["name"],
        ],
    )
    assert "Abandoned question" not in document  # on another branch
    assert texts["hidden"] not in document  # display: false
    assert '<span class="diff-add">' + texts["diff_add"] in body
    assert '<span class="diff-del">' + texts["diff_del"] in body


def test_tool_outputs_and_thinking_are_collapsible(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    build_session(sm)
    body = _transcript(export_session_html(sm, "x.html").read_text())
    assert "<summary>output (1 line)</summary>" in body
    parsed = _parse(body)
    arguments = [attrs for tag, attrs in parsed.tags if tag == "details" and attrs.get("class") == "tool-args"]
    assert len(arguments) == 1 and "open" not in arguments[0]  # the edit's raw arguments; its diff is shown open
    classes = [(attrs.get("class"), "open" in attrs) for tag, attrs in parsed.tags if tag == "details"]
    assert ("thinking", False) in classes
    assert ("tool-output", True) in classes  # short outputs start open, every one can be folded
    assert sum(1 for cls, _ in classes if cls == "tool-output") == 3  # bash call, edit call, user bash


def test_long_tool_output_starts_collapsed(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(assistant([ToolCall(id="c", name="read", arguments={"path": "a.txt"})], 1, stop="toolUse"))
    sm.append_message(tool_result("c", "read", "\n".join(f"line {i}" for i in range(50)), 2))
    parsed = _parse(export_session_html(sm, "x.html").read_text())
    outputs = [attrs for tag, attrs in parsed.tags if tag == "details" and attrs.get("class") == "tool-output"]
    assert len(outputs) == 1 and "open" not in outputs[0]
    assert "line 49" in "".join(parsed.text)
    assert "output (50 lines)" in "".join(parsed.text)


PAYLOAD = "<script>alert(1)</script>\"'&<img src=x onerror=alert(2)>"


def test_every_text_field_is_escaped(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path / PAYLOAD))
    texts = build_session(sm, PAYLOAD)
    sm.append_message(UserMessage(content=f'```x"><script>y()</script>\n{PAYLOAD}\n```', timestamp=5))
    document = export_session_html(sm, tmp_path / "x.html").read_text()
    parsed = _parse(document)
    assert len([tag for tag, _ in parsed.tags if tag == "script"]) == 1
    assert "alert" not in "".join(parsed.scripts)
    for tag, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert tag not in ("iframe", "object", "embed", "link", "a", "form")
        if tag == "img":
            assert (attrs.get("src") or "").startswith("data:image/png;base64,")
    visible = "".join(parsed.text)
    shown = [value.replace("**", "") for key, value in texts.items() if key != "hidden"]
    for value in shown:
        assert value in visible
    assert texts["hidden"] not in visible
    assert visible.count(PAYLOAD) >= len(shown)


def test_images_are_embedded_as_data_uris(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    sm.append_message(
        UserMessage(
            content=[
                TextContent(text="look"),
                ImageContent(data=PNG_1X1, mime_type="image/png"),
                ImageContent(data="PHN2Zz48L3N2Zz4=", mime_type="image/svg+xml"),
                ImageContent(data='abc" onload="x', mime_type="image/png"),
            ],
            timestamp=1,
        )
    )
    parsed = _parse(export_session_html(sm, "x.html").read_text())
    sources = [attrs.get("src") or "" for tag, attrs in parsed.tags if tag == "img"]
    assert sources == [f"data:image/png;base64,{PNG_1X1}"]
    assert base64.b64decode(sources[0].split(",", 1)[1]).startswith(b"\x89PNG")
    assert "[image not embedded: image/svg+xml]" in "".join(parsed.text)


def test_default_path_is_prefixed_stem_in_the_current_directory(tmp_path: Path) -> None:
    session = shutil.copyfile(DATA / "pi_print_text.jsonl", tmp_path / "2026-11-30T08-29-24-450Z_abc.jsonl")
    out = export_session_html(session)
    assert out == Path.cwd() / "apex-code-session-2026-11-30T08-29-24-450Z_abc.html"
    assert out.is_file()
    elsewhere = tmp_path / "elsewhere"
    assert export_session_html(session, cwd=elsewhere) == elsewhere / out.name
    assert export_session_html(session, "sub/named.html", cwd=elsewhere) == elsewhere / "sub" / "named.html"
    assert default_html_path("/x/y/s.jsonl", "/out") == Path("/out/apex-code-session-s.html")


def test_default_path_of_live_and_in_memory_sessions(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path))
    build_session(sm)
    assert sm.session_file is not None
    assert export_session_html(sm) == Path.cwd() / f"apex-code-session-{sm.session_file.stem}.html"
    memory = SessionManager.in_memory(str(tmp_path))
    out = export_session_html(memory)
    assert out.name.startswith("apex-code-session-") and out.name.endswith(f"_{memory.session_id}.html")
    assert "(no messages)" in out.read_text()


def test_pi_fixture_session(tmp_path: Path) -> None:
    session = shutil.copyfile(DATA / "pi_print_text.jsonl", tmp_path / "pi.jsonl")
    before = session.read_bytes()
    document = export_session_html(session, "pi.html").read_text()
    _assert_in_order(
        _transcript(document),
        ["Model: fake/fake-model", "Thinking level: off", "Say hello", "Hello! I am a fake model."],
    )
    assert "01a22b92-b461-7628-921d-5d46f6aff883" in document
    assert "/home/user/pi-golden/work" in document
    assert session.read_bytes() == before


def test_old_version_file_is_exported_without_rewriting_it(tmp_path: Path) -> None:
    session = shutil.copyfile(DATA / "v1.jsonl", tmp_path / "v1.jsonl")
    before = session.read_bytes()
    body = _transcript(export_session_html(session, "v1.html").read_text())
    _assert_in_order(body, ["first question", "second answer", "User asked two questions.", "third question"])
    assert session.read_bytes() == before


def test_v3_file_exports_only_its_last_branch(tmp_path: Path) -> None:
    session = shutil.copyfile(DATA / "v3.jsonl", tmp_path / "v3.jsonl")
    body = _transcript(export_session_html(session, "v3.html").read_text())
    _assert_in_order(body, ["Thinking level: high", "list files", "no result", "$ ls", "Tried another way."])
    for absent in ("thanks", "git status", "foreign prompt", "Listed files."):
        assert absent not in body


def test_missing_and_foreign_files_raise(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="File not found"):
        export_session_html(tmp_path / "nope.jsonl")
    foreign = tmp_path / "notes.jsonl"
    foreign.write_text('{"hello": "world"}\n')
    with pytest.raises(ExportError, match="not a valid pi session"):
        export_session_html(foreign)
    assert foreign.read_text() == '{"hello": "world"}\n'


def test_line_counts_do_not_count_a_final_line_break(tmp_path: Path) -> None:
    """A 2-line output ending in a line break (as command output does) is 2 lines, as is a written file's."""
    sm = SessionManager.in_memory(str(tmp_path))
    write = ToolCall(id="w", name="write", arguments={"path": "a.txt", "content": "one\ntwo\n"})
    sm.append_message(assistant([ToolCall(id="c", name="bash", arguments={"command": "ls"}), write], 1, stop="toolUse"))
    sm.append_message(tool_result("c", "bash", "a.txt\nb.txt\n", 2))
    text = "".join(_parse(export_session_html(sm, "x.html").read_text()).text)
    assert "output (2 lines)" in text and "3 lines" not in text
    assert "content (2 lines)" in text
