"""Session JSONL export and import: entries survive byte for byte, bad lines are reported as file:line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from export_test_helpers import DATA, build_session

from apex_coding_agent.export import (
    ExportError,
    check_session_jsonl,
    export_session_html,
    export_session_jsonl,
    import_session_jsonl,
)
from apex_coding_agent.session.session_manager import SessionManager


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line]


def _entry_lines(path: Path) -> dict[str, str]:
    return {json.loads(line)["id"]: line for line in _lines(path)[1:]}


def test_branch_export_keeps_the_branch_entries_verbatim(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path))
    build_session(sm)
    assert sm.session_file is not None
    out = export_session_jsonl(sm, "branch.jsonl")
    assert out == Path.cwd() / "branch.jsonl"
    header = json.loads(_lines(out)[0])
    assert header["type"] == "session" and header["version"] == 3
    assert header["id"] != sm.session_id
    assert header["cwd"] == str(tmp_path) and header["parentSession"] == str(sm.session_file)
    source = _entry_lines(sm.session_file)
    exported = _entry_lines(out)
    branch_ids = [entry.id for entry in sm.get_branch()]
    assert list(exported) == branch_ids
    assert all(exported[i] == source[i] for i in branch_ids)
    assert len(source) > len(exported)  # the abandoned question stays behind

    reopened = SessionManager.open(out)
    assert [entry.id for entry in reopened.get_branch()] == branch_ids
    assert reopened.build_session_context().messages == sm.build_session_context().messages
    assert reopened.get_session_name() == sm.get_session_name()
    reopened.close()
    sm.close()


def test_whole_file_export_keeps_every_entry(tmp_path: Path) -> None:
    session = shutil.copyfile(DATA / "v3.jsonl", tmp_path / "v3.jsonl")
    out = export_session_jsonl(session, tmp_path / "all.jsonl", whole_file=True)
    assert _lines(out)[1:] == _lines(session)[1:]
    header = json.loads(_lines(out)[0])
    assert header["delegationDepth"] == 1 and header["parentSession"] == str(session)
    branch_only = export_session_jsonl(session, tmp_path / "branch.jsonl")
    assert list(_entry_lines(branch_only)) == ["00000001", "00000002", "00000003", "00000004", "00000010", "00000011"]


def test_in_memory_session_exports_too(tmp_path: Path) -> None:
    sm = SessionManager.in_memory(str(tmp_path))
    texts = build_session(sm)
    out = export_session_jsonl(sm, "memory.jsonl")
    assert "parentSession" not in json.loads(_lines(out)[0])
    assert texts["final"] in out.read_text()


def test_export_then_import_round_trip(tmp_path: Path) -> None:
    sm = SessionManager.create(str(tmp_path))
    texts = build_session(sm)
    exported = export_session_jsonl(sm, tmp_path / "share" / "fix.jsonl")
    session_dir = tmp_path / "sessions"
    result = import_session_jsonl(exported, session_dir)
    assert result.path == session_dir / "fix.jsonl"
    assert result.path.read_bytes() == exported.read_bytes()
    assert result.issues == []
    assert result.entry_count == len(sm.get_branch())
    assert result.session_id == json.loads(_lines(exported)[0])["id"]
    imported = SessionManager.open(result.path, session_dir)
    assert [e.model_dump(by_alias=True) for e in imported.get_entries()] == [
        e.model_dump(by_alias=True) for e in sm.get_branch()
    ]
    html = export_session_html(imported, "imported.html").read_text()
    assert texts["final"] in html and texts["user"] in html
    imported.close()
    sm.close()


def test_import_reports_corrupt_lines_with_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "damaged.jsonl"
    good = '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",'
    good += '"message":{"role":"user","content":"hi","timestamp":1}}'
    source.write_text(
        "\n".join(
            [
                '{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
                good,
                "",
                '{"type":"message","id":"aaaa0002",',
                "[1, 2]",
                '{"type":"model_change","parentId":"aaaa0001","timestamp":"t","provider":"p","modelId":"m"}',
                good,
                '{"type":"label","id":"aaaa0003","parentId":"gone","timestamp":"t","targetId":"aaaa0001"}',
            ]
        )
        + "\n"
    )
    check = check_session_jsonl(source)
    assert [(issue.line_no, issue.reason.split(":")[0]) for issue in check.issues] == [
        (4, "not valid JSON"),
        (5, "not a JSON object"),
        (6, "not a session entry"),
        (7, "duplicate entry id aaaa0001"),
        (8, "parent entry gone not found"),
    ]
    assert str(check.issues[0]).startswith(f"{source}:4: not valid JSON")
    assert check.entry_count == 3

    with pytest.raises(ExportError, match=rf"{source.name}:4: not valid JSON"):
        import_session_jsonl(source, tmp_path / "strict", strict=True)
    assert not (tmp_path / "strict").exists()

    result = import_session_jsonl(source, tmp_path / "lenient")
    assert result.path.read_bytes() == source.read_bytes()
    assert result.issues == check.issues  # reported against the file the user named


def test_import_of_old_version_and_renamed_suffix(tmp_path: Path) -> None:
    source = shutil.copyfile(DATA / "v1.jsonl", tmp_path / "old.txt")
    result = import_session_jsonl(source, tmp_path / "sessions")
    assert result.path.name == "old.jsonl"
    assert result.issues == [] and result.entry_count == 6
    assert source.read_bytes() == (DATA / "v1.jsonl").read_bytes()


def test_import_refuses_foreign_files_and_name_clashes(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="File not found"):
        import_session_jsonl(tmp_path / "missing.jsonl", tmp_path)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"type":"message"}\n')
    with pytest.raises(ExportError, match="Not a session file"):
        import_session_jsonl(foreign, tmp_path / "sessions")

    source = shutil.copyfile(DATA / "pi_print_text.jsonl", tmp_path / "pi.jsonl")
    session_dir = tmp_path / "sessions"
    session_dir.mkdir()
    clash = session_dir / "pi.jsonl"
    clash.write_text("mine\n")
    with pytest.raises(ExportError, match="already exists"):
        import_session_jsonl(source, session_dir)
    assert clash.read_text() == "mine\n"
    # Importing a file that already lives in the session dir copies nothing.
    same = import_session_jsonl(source, tmp_path)
    assert same.path == source and same.session_id == "01a22b92-b461-7628-921d-5d46f6aff883"
