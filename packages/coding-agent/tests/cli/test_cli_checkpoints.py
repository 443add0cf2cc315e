"""File checkpoints through the real `apex-code`: a scripted model writes, edits and runs bash; RPC and `--rewind`
put the files back, `redo` returns them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from cli_helpers import json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer
from apex_coding_agent.checkpoints.blobs import content_hash

SCRIPT = [
    {"tool_calls": [{"name": "write", "arguments": {"path": "app.py", "content": "print('v1')\n"}}]},
    {"text": "wrote it"},
    {
        "tool_calls": [
            {"name": "edit", "arguments": {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}},
            {
                "name": "bash",
                "arguments": {"command": "sed -i 's/keep/CHANGED/' notes.txt && rm data.bin && touch new"},
            },
        ]
    },
    {"text": "changed it"},
]


def _user_entry_ids(agent: Path) -> list[str]:
    [file] = list((agent / "sessions").rglob("*.jsonl"))
    records = [json.loads(line) for line in file.read_text().splitlines()]
    return [r["id"] for r in records if r.get("type") == "message" and r["message"]["role"] == "user"]


def test_rpc_and_cli_rewind_restore_what_the_model_changed(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    (work / "notes.txt").write_text("keep me\n")
    (work / "data.bin").write_bytes(b"\x00\xff" * 100)
    original = {p.name: p.read_bytes() for p in work.iterdir()}
    flags = ["--mode", "json", "--permission-mode", "bypassPermissions"]
    with ScriptedModelServer(SCRIPT) as server:
        write_models(agent, server)
        first = run_cli([*flags, "-p", "one"], work, agent)
        assert first.returncode == 0, first.stderr
        session_id = json_lines(first.stdout)[0]["id"]
        second = run_cli([*flags, "--session", session_id, "-p", "two"], work, agent)
        assert second.returncode == 0, second.stderr
    assert (work / "app.py").read_text() == "print('v2')\n"
    assert not (work / "data.bin").exists()
    one, two = _user_entry_ids(agent)

    commands = [
        {"id": "c", "type": "get_checkpoints"},
        {"id": "d", "type": "rewind", "entryId": two, "dryRun": True},
        {"id": "r", "type": "rewind", "entryId": two, "mode": "files"},
        {"id": "x", "type": "rewind", "entryId": "nope"},
    ]
    rpc = run_cli(
        ["--mode", "rpc", "--permission-mode", "bypassPermissions", "--session", session_id],
        work,
        agent,
        stdin="".join(json.dumps(c) + "\n" for c in commands),
    )
    responses = {r["id"]: r for r in json_lines(rpc.stdout) if r.get("type") == "response"}
    points = responses["c"]["data"]["checkpoints"]
    assert [p["entryId"] for p in points] == [one, two]
    assert points[0]["files"] == ["app.py"]
    assert set(points[1]["files"]) == {"app.py", "notes.txt", "data.bin", "new"}
    assert set(responses["d"]["data"]["restore"]) == {"app.py", "notes.txt", "data.bin", "new"}
    assert responses["r"]["data"]["conflicts"] == []
    assert responses["x"]["success"] is False and "not a user message" in responses["x"]["error"]
    assert (work / "app.py").read_text() == "print('v1')\n"
    assert (work / "data.bin").read_bytes() == original["data.bin"]
    assert not (work / "new").exists()

    (work / "app.py").write_text("my own edit\n")  # someone else edits a file the agent wrote
    cli = run_cli(["--session", session_id, "--rewind", one, "--rewind-mode", "files"], work, agent)
    assert cli.returncode == 2, cli.stderr  # a conflict: reported, nothing of the user's lost
    assert "Conflict: app.py" in cli.stderr
    assert (work / "app.py").read_text() == "my own edit\n"
    result = json_lines(cli.stdout)[0]
    assert [c["path"] for c in result["conflicts"]] == ["app.py"]

    taken = run_cli(["--session", session_id, "--rewind", one, "--overwrite", "app.py"], work, agent)
    assert taken.returncode == 0, taken.stderr
    assert {p.name: p.read_bytes() for p in work.iterdir()} == original
    assert json_lines(taken.stdout)[0]["editorText"] == "one"

    bad = run_cli(["--session", session_id, "--rewind", one, "--rewind-mode", "sideways"], work, agent)
    assert bad.returncode == 1 and "--rewind-mode requires one of" in bad.stderr


def test_an_interrupted_restore_is_announced_in_json_and_rpc_modes(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    flags = ["--mode", "json", "--permission-mode", "bypassPermissions"]
    script = [
        {"tool_calls": [{"name": "write", "arguments": {"path": "made.txt", "content": "agent\n"}}]},
        {"text": "done", "repeat": True},
    ]
    with ScriptedModelServer(script) as server:
        write_models(agent, server)
        first = run_cli([*flags, "-p", "make it"], work, agent)
        assert first.returncode == 0, first.stderr
        session_id = json_lines(first.stdout)[0]["id"]
        # What a restore killed before its first file leaves: the journal of a rewind that removes `made.txt`.
        journal = agent / "checkpoints" / "journal" / f"{session_id}.json"
        journal.parent.mkdir(parents=True, exist_ok=True)
        entry = {"path": "made.txt", "before": content_hash(b"agent\n"), "after": None}
        journal.write_text(json.dumps({"root": str(work.resolve()), "files": [entry]}))

        again = run_cli([*flags, "--session", session_id, "-p", "again"], work, agent)
        assert again.returncode == 0, again.stderr
        [warning] = [line for line in again.stderr.splitlines() if "restore" in line]
        assert warning.startswith("Warning: a file restore of this session was interrupted")
        assert "recover_restore" in warning and f"apex-code --session {session_id} --rewind" in warning
        assert all(record.get("type") != "restore_pending" for record in json_lines(again.stdout))  # JSON as it was

    commands = [
        {"id": "s1", "type": "get_state"},
        {"id": "rc", "type": "recover_restore", "action": "complete"},
        {"id": "s2", "type": "get_state"},
    ]
    rpc = run_cli(
        ["--mode", "rpc", "--permission-mode", "default", "--session", session_id],
        work,
        agent,
        stdin="".join(json.dumps(c) + "\n" for c in commands),
    )
    records = json_lines(rpc.stdout)
    assert records[0] == {"type": "restore_pending", "sessionId": session_id, "command": "recover_restore"}
    responses = {r["id"]: r for r in records if r.get("type") == "response"}
    assert responses["s1"]["data"]["pendingRestore"] is True
    assert responses["rc"]["data"] == {"written": ["made.txt"], "conflicts": []}
    assert "pendingRestore" not in responses["s2"]["data"]
    assert not (work / "made.txt").exists() and not journal.exists()


def test_checkpoints_gc_removes_only_blobs_no_session_refers_to(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    blobs = agent / "checkpoints" / "blobs" / "ab"
    blobs.mkdir(parents=True)
    kept, orphan = "ab" + "1" * 62, "ab" + "2" * 62
    (blobs / kept[2:]).write_text("referenced")
    (blobs / orphan[2:]).write_text("orphan")
    sessions = agent / "sessions" / "--somewhere--"
    sessions.mkdir(parents=True)
    entry = {"type": "custom", "customType": "apex-code.checkpoint", "data": {"files": [{"before": kept}]}}
    (sessions / "s.jsonl").write_text(json.dumps(entry, separators=(",", ":")) + "\n")

    done = run_cli(["checkpoints", "gc", "--grace-seconds", "0"], work, agent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"removed": 1, "freedBytes": 6, "kept": 1}
    assert (blobs / kept[2:]).exists() and not (blobs / orphan[2:]).exists()
    wrong = run_cli(["checkpoints", "collect"], work, agent)
    assert wrong.returncode == 1 and "usage: apex-code checkpoints gc" in wrong.stderr
    helped = run_cli(["checkpoints", "--help"], work, agent)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: apex-code checkpoints gc")
    assert "--grace-seconds" in helped.stdout and helped.stderr == ""


def test_sessions_gc_keeps_referenced_and_young_blobs(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    blobs = agent / "checkpoints" / "blobs" / "cd"
    blobs.mkdir(parents=True)
    referenced, old, young = ("cd" + digit * 62 for digit in "345")
    for digest in (referenced, old, young):
        (blobs / digest[2:]).write_text(digest[2:6])
    two_hours_ago = time.time() - 7200
    for digest in (referenced, old):
        os.utime(blobs / digest[2:], (two_hours_ago, two_hours_ago))
    sessions = agent / "sessions" / "--somewhere--"
    sessions.mkdir(parents=True)
    entry = {"type": "custom", "customType": "apex-code.checkpoint", "data": {"files": [{"before": referenced}]}}
    (sessions / "s.jsonl").write_text(json.dumps(entry, separators=(",", ":")) + "\n")

    bad = run_cli(["sessions", "gc", "--grace-seconds", "-1"], work, agent)
    assert bad.returncode == 1 and "--grace-seconds needs a number of seconds" in bad.stderr
    assert all((blobs / digest[2:]).exists() for digest in (referenced, old, young))

    done = run_cli(["sessions", "gc"], work, agent)  # the default grace (an hour) keeps the young orphan
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"removed": 1, "freedBytes": 4, "kept": 2}
    assert sorted(p.name for p in blobs.iterdir()) == sorted([referenced[2:], young[2:]])
