"""modes.md check 4 in the real process: a flag warning is printed and the run goes on."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli, write_models

from apex_ai.testing.scripted_server import ScriptedModelServer


def test_invalid_thinking_warns_and_the_run_continues(tmp_path: Path) -> None:
    """modes.md check 4 in the real process: `--thinking huge` is a warning on stderr, the run still completes."""
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    with ScriptedModelServer([{"text": "still here", "usage": {"input": 5, "output": 2}}]) as server:
        write_models(agent, server)
        proc = run_cli(["--thinking", "huge", "--permission-mode", "default", "-p", "hi"], work, agent)
        requests = len(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "still here\n"
    assert 'Invalid thinking level "huge". Valid values: off, minimal' in proc.stderr
    assert "Error" not in proc.stderr
    assert requests == 1
