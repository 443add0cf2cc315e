"""Running scripted turns that call write, edit and bash, and reading a project's files."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from runtime_helpers import Harness

from apex_ai.providers.faux import faux_assistant_message, faux_tool_call
from apex_coding_agent.runtime import AgentSession


async def turn(harness: Harness, session: AgentSession, text: str, *calls: tuple[str, dict[str, Any]]) -> None:
    """One user turn in which the model calls `calls` (one tool call per step, in order), then answers."""
    steps = [faux_assistant_message([faux_tool_call(name, args)], stop_reason="toolUse") for name, args in calls]
    harness.script(*steps, faux_assistant_message("done"))
    await session.prompt(text)


def tree(root: Path) -> dict[str, bytes]:
    """Every file below `root` (but `.git`) by relative path."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def git_init(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "start", "--allow-empty")


def user_entries(session: AgentSession) -> list[str]:
    return [point.entry_id for point in session.checkpoints.get_checkpoints()]
