"""An extension's `append_entry` is announced to JSON and RPC clients as `entry_appended`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_helpers import CLI, env_for, json_lines, run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer

# Records how many turns ran, as extensions keep their own state: in a `custom` entry.
COUNTER = """
def extension(pi):
    @pi.on("turn_end")
    def count(event, ctx):
        pi.append_entry("turn-counter", {"turns": 1, "text": "caf\\u00e9"})
"""


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    extension = tmp_path / "counter.py"
    extension.write_text(COUNTER)
    return work, agent, extension


def _file_custom_entries(agent: Path) -> list[dict[str, object]]:
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    records = [json.loads(line) for line in files[0].read_text().splitlines()]
    return [r for r in records if r.get("type") == "custom"]


def test_json_mode_emits_entry_appended_with_the_stored_entry(tmp_path: Path) -> None:
    work, agent, extension = _setup(tmp_path)
    with ScriptedModelServer([{"text": "Hi.", "usage": {"input": 9, "output": 2}}]) as server:
        write_models(agent, server)
        proc = run_cli(["--mode", "json", "-e", str(extension), "--permission-mode", "default", "hi"], work, agent)
    assert proc.returncode == 0, proc.stderr
    lines = json_lines(proc.stdout)
    appended = [line for line in lines if line["type"] == "entry_appended"]
    stored = _file_custom_entries(agent)
    # Exactly what went into the file, in the file's own field names.
    assert [line["entry"] for line in appended] == stored
    assert stored[0]["customType"] == "turn-counter" and stored[0]["data"] == {"turns": 1, "text": "café"}
    # Announced after the reply it followed (extension handlers see turn_end first), before the envelope.
    kinds = [line["type"] for line in lines]
    last_reply = max(i for i, line in enumerate(lines) if line["type"] == "message_end")
    assert last_reply < kinds.index("entry_appended") < kinds.index("result")


def test_rpc_clients_receive_entry_appended(tmp_path: Path) -> None:
    work, agent, extension = _setup(tmp_path)
    with ScriptedModelServer([{"text": "Hi.", "usage": {"input": 9, "output": 2}}]) as server:
        write_models(agent, server)
        with subprocess.Popen(
            [*CLI, "--mode", "rpc", "-e", str(extension), "--permission-mode", "default"],
            cwd=work,
            env=env_for(agent),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": "hi"}) + "\n")
            proc.stdin.flush()
            seen: list[dict[str, object]] = []
            for raw in proc.stdout:
                record = json.loads(raw)
                seen.append(record)
                if record.get("type") == "agent_settled":
                    break
            proc.communicate(timeout=30)
    appended = [r for r in seen if r.get("type") == "entry_appended"]
    assert [r["entry"] for r in appended] == _file_custom_entries(agent)
    assert len(appended) == 1
