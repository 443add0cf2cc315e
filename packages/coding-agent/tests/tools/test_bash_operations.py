"""Pluggable bash operations (spec tools.md "Operations"): the `bash` tool and user `!` commands run where a
`BashOperations` object says. The stand-in "remote machine" here maps a remote path onto a temp directory and runs
the command there for real, as an SSH or container backend would."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from apex_agent.tools import AgentToolResult, ToolExecutionError
from apex_ai.abort import AbortController, AbortSignal
from apex_ai.types import TextContent
from apex_coding_agent.runtime.bash_executor import execute_user_bash
from apex_coding_agent.tools import (
    BashTool,
    BashToolOptions,
    LocalBashOperations,
    ProcessOutcome,
    ToolsOptions,
    create_tool,
)

REMOTE_ROOT = "/srv/remote-project"


class MappedMachine:
    """Runs commands locally in `root` when asked for `REMOTE_ROOT`; records every call."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[dict[str, Any]] = []
        self.local = LocalBashOperations()

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        env: Mapping[str, str],
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> ProcessOutcome:
        self.calls.append({"command": command, "cwd": cwd, "env": dict(env), "timeout": timeout})
        local_cwd = str(self.root) if cwd == REMOTE_ROOT else cwd
        return await self.local.exec(command, local_cwd, env=env, on_data=on_data, signal=signal, timeout=timeout)


class JsonExitMachine:
    """Answers like the original product's operations: `{"exitCode": n}` after writing some output."""

    def __init__(self, code: int) -> None:
        self.code = code

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        env: Mapping[str, str],
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
    ) -> dict[str, int]:
        on_data(f"ran {command} in {cwd}\n".encode())
        return {"exitCode": self.code}


def _text(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_the_bash_tool_runs_commands_through_its_operations(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("on the remote side")
    machine = MappedMachine(tmp_path)
    tool = BashTool(REMOTE_ROOT, BashToolOptions(operations=machine))  # REMOTE_ROOT does not exist here
    result = await tool.execute("t1", {"command": "cat marker.txt", "timeout": 5}, None, None)
    assert _text(result) == "on the remote side"
    assert machine.calls[0]["cwd"] == REMOTE_ROOT and machine.calls[0]["timeout"] == 5
    assert machine.calls[0]["env"]["PATH"] == os.environ["PATH"]  # the tool's environment, handed on
    assert result.details["execution"] == {"cwd": REMOTE_ROOT, "exitCode": 0}  # no local shell to report


async def test_a_failing_remote_command_reads_like_a_local_one() -> None:
    tool = BashTool("/anywhere", BashToolOptions(operations=JsonExitMachine(3)))
    with pytest.raises(ToolExecutionError) as failure:
        await tool.execute("t1", {"command": "make"}, None, None)
    assert str(failure.value) == "ran make in /anywhere\n\n\nCommand exited with code 3"


async def test_tools_options_bash_operations_reach_the_tool(tmp_path: Path) -> None:
    machine = MappedMachine(tmp_path)
    tool = create_tool("bash", REMOTE_ROOT, ToolsOptions(bash_operations=machine))
    result = await tool.execute("t1", {"command": "pwd"}, None, None)
    assert _text(result).strip() == str(tmp_path)


async def test_abort_reaches_the_operations_and_is_reported(tmp_path: Path) -> None:
    machine = MappedMachine(tmp_path)
    tool = BashTool(REMOTE_ROOT, BashToolOptions(operations=machine))
    controller = AbortController()

    async def abort_soon(_: AgentToolResult) -> None:
        controller.abort()

    with pytest.raises(ToolExecutionError, match="Command aborted"):
        await tool.execute("t1", {"command": "echo started; sleep 30"}, controller.signal, abort_soon)


async def test_user_commands_run_through_operations(tmp_path: Path) -> None:
    (tmp_path / "remote.txt").write_text("x")
    machine = MappedMachine(tmp_path)
    chunks: list[str] = []
    result = await execute_user_bash("ls; exit 4", REMOTE_ROOT, on_chunk=chunks.append, operations=machine)
    assert result.output.strip() == "remote.txt"
    assert result.exit_code == 4 and not result.cancelled
    assert "".join(chunks).strip() == "remote.txt"
    assert machine.calls[0]["command"] == "ls; exit 4"
