"""`bash` with real processes (spec tools.md §6, acceptance 13-18)."""

import asyncio
import os
import re
import time
import tracemalloc
from pathlib import Path

import pytest

from apex_agent.tools import AgentToolResult, ToolExecutionError
from apex_ai.abort import AbortController
from apex_ai.types import TextContent
from apex_coding_agent.tools import BashTool, BashToolOptions, SessionEnvironment
from apex_coding_agent.tools.shell import kill_tracked_process_groups, tracked_process_groups


def _text(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _alive(pid: int) -> bool:
    """True while `pid` runs; a zombie waiting for an absent reaper counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def _wait_gone(pid: int) -> bool:
    for _ in range(500):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


def _tool(tmp_path: Path, **options: object) -> BashTool:
    return BashTool(str(tmp_path), BashToolOptions(temp_dir=str(tmp_path), **options))  # type: ignore[arg-type]


async def test_echo(tmp_path: Path) -> None:
    result = await _tool(tmp_path).execute("c", {"command": "echo hi"}, None, None)
    assert _text(result) == "hi\n"
    assert result.details["execution"]["exitCode"] == 0
    assert result.details["execution"]["argv"][1:] == ["-c", "echo hi"]
    assert result.details["execution"]["cwd"] == str(tmp_path)


async def test_no_output_and_stderr_merged(tmp_path: Path) -> None:
    assert _text(await _tool(tmp_path).execute("c", {"command": "true"}, None, None)) == "(no output)"
    merged = await _tool(tmp_path).execute("c", {"command": "echo out; echo err >&2; echo out2"}, None, None)
    assert _text(merged) == "out\nerr\nout2\n"


async def test_exit_code_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolExecutionError) as info:
        await _tool(tmp_path).execute("c", {"command": "echo partial; exit 3"}, None, None)
    assert str(info.value) == "partial\n\n\nCommand exited with code 3"
    assert info.value.details["execution"]["exitCode"] == 3
    with pytest.raises(ToolExecutionError, match=r"^\(no output\)\n\nCommand exited with code 3$"):
        await _tool(tmp_path).execute("c", {"command": "exit 3"}, None, None)


async def test_timeout_kills_the_process_tree(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolExecutionError) as info:
        await _tool(tmp_path).execute(
            "c", {"command": "sleep 30 & echo $! > child.pid; echo started; sleep 30", "timeout": 0.3}, None, None
        )
    assert time.monotonic() - started < 10  # not the 30 s the command would take: the timeout ended it
    assert str(info.value) == "started\n\n\nCommand timed out after 0.3 seconds"
    child = int((tmp_path / "child.pid").read_text())
    assert await _wait_gone(child)
    assert tracked_process_groups() == frozenset()


async def test_abort_kills_the_process_group(tmp_path: Path) -> None:
    controller = AbortController()
    task = asyncio.ensure_future(
        _tool(tmp_path).execute("c", {"command": "sleep 30 & echo $! > child.pid; sleep 30"}, controller.signal, None)
    )
    for _ in range(100):
        if (tmp_path / "child.pid").exists() and (tmp_path / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.01)
    started = time.monotonic()
    controller.abort()
    with pytest.raises(ToolExecutionError, match="^Command aborted$"):
        await task
    assert time.monotonic() - started < 10  # not the 30 s the command would take
    assert await _wait_gone(int((tmp_path / "child.pid").read_text()))


async def test_orphaned_grandchild_holding_the_pipe_does_not_block(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await _tool(tmp_path).execute("c", {"command": "(sleep 30 &); echo done"}, None, None)
    assert _text(result) == "done\n"
    assert time.monotonic() - started < 10  # the call ended with the shell, not with the grandchild 30 s later


async def test_background_child_is_killed_when_the_call_ends(tmp_path: Path) -> None:
    command = "sleep 1000 & echo $! > child.pid; echo started"
    result = await _tool(tmp_path).execute("c", {"command": command}, None, None)
    assert _text(result) == "started\n"
    # The call is over: the shell's process group, and with it the background child, is gone (a SIGKILL takes
    # effect when the child is next scheduled, which a loaded machine may delay a little).
    assert await _wait_gone(int((tmp_path / "child.pid").read_text()))


async def test_a_new_session_escapes_the_group_kill(tmp_path: Path) -> None:
    # Documented escape hatch: what a command starts in a session of its own outlives the call. The shell waits for
    # setsid (-w) here, so the new session exists before the call ends (`setsid cmd &` would race the group kill).
    command = "setsid -w sh -c 'sleep 1000 > /dev/null 2>&1 & echo $! > child.pid'"
    await _tool(tmp_path).execute("c", {"command": command}, None, None)
    pid = int((tmp_path / "child.pid").read_text())
    try:
        assert _alive(pid)
    finally:
        os.kill(pid, 9)


async def test_many_lines_are_truncated_and_spilled(tmp_path: Path) -> None:
    result = await _tool(tmp_path).execute("c", {"command": "seq 1 5000"}, None, None)
    text = _text(result)
    body, notice = text.split("\n\n")
    assert body.split("\n") == [str(i) for i in range(3001, 5001)]
    match = re.fullmatch(
        r"\[Showing lines 3001-5000 of 5000\. Full output: (.+/apex-code-bash-[0-9a-f]{16}\.log)\]", notice
    )
    assert match is not None
    log = Path(match.group(1))
    assert log.parent == tmp_path
    assert log.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert result.details["fullOutputPath"] == str(log)
    assert result.details["truncation"]["truncatedBy"] == "lines"


async def test_ten_megabytes_with_bounded_memory(tmp_path: Path) -> None:
    command = f"yes {'0123456789' * 9}abcdefghi | head -c 10485760"  # 100-byte lines
    tracemalloc.start()
    try:
        result = await _tool(tmp_path).execute("c", {"command": command}, None, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 1024 * 1024
    text = _text(result)
    # 104857 full lines and a 60-byte partial one; 511 more lines fit into 50 KB after it.
    assert text.endswith(" (50.0KB limit). Full output: " + result.details["fullOutputPath"] + "]")
    assert "[Showing lines 104347-104858 of 104858 (50.0KB limit)." in text
    assert os.path.getsize(result.details["fullOutputPath"]) == 10485760


async def test_partial_last_line(tmp_path: Path) -> None:
    result = await _tool(tmp_path).execute("c", {"command": "head -c 60000 /dev/zero | tr '\\0' a"}, None, None)
    text = _text(result)
    assert text.startswith("a" * 51200 + "\n\n")
    assert text.endswith(
        f"[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {result.details['fullOutputPath']}]"
    )


async def test_session_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APEX_CODE_SESSION_ID", "inherited")
    monkeypatch.setenv("PI_MODEL", "inherited-model")
    current = {"id": "sess-1"}
    tool = _tool(
        tmp_path,
        session_environment=lambda: SessionEnvironment(session_id=current["id"], provider="anthropic", model="m-1"),
    )
    command = 'echo "$APEX_CODE_SESSION_ID $PI_SESSION_ID $APEX_CODE_MODEL $PI_MODEL ${PI_SESSION_FILE-unset}"'
    assert _text(await tool.execute("c", {"command": command}, None, None)) == "sess-1 sess-1 m-1 m-1 unset\n"
    current["id"] = "sess-2"  # resolved when each command starts
    assert _text(await tool.execute("c", {"command": "echo $PI_SESSION_ID"}, None, None)) == "sess-2\n"
    # What a user `!` command uses: no session variables, inherited ones removed.
    hidden = _tool(
        tmp_path, session_environment=lambda: SessionEnvironment(session_id="x"), expose_session_environment=False
    )
    out = await hidden.execute("c", {"command": 'echo "[$APEX_CODE_SESSION_ID][$PI_MODEL]"'}, None, None)
    assert _text(out) == "[][]\n"


async def test_agent_bin_prefix_and_spawn_hook(tmp_path: Path) -> None:
    def hook(ctx):  # type: ignore[no-untyped-def]
        ctx.env["HOOKED"] = "yes"
        return ctx

    tool = _tool(tmp_path, agent_dir=str(tmp_path / "agent"), command_prefix="set -e; X=prefixed", spawn_hook=hook)
    out = await tool.execute("c", {"command": 'echo "$X $HOOKED ${PATH%%:*}"'}, None, None)
    assert _text(out) == f"prefixed yes {tmp_path / 'agent' / 'bin'}\n"


async def test_streaming_updates(tmp_path: Path) -> None:
    updates: list[tuple[float, AgentToolResult]] = []
    command = "for i in 1 2 3 4 5 6; do echo $i; sleep 0.05; done"
    await _tool(tmp_path).execute("c", {"command": command}, None, lambda r: updates.append((time.monotonic(), r)))
    assert updates[0][1].content == []
    assert updates[0][1].details is None
    later = updates[1:]
    assert len(later) >= 2
    texts = [_text(r) for _, r in later]
    assert texts[0].startswith("1\n")
    assert all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))  # accumulated, not deltas
    assert all(b - a >= 0.095 for (a, _), (b, _) in zip(later, later[1:], strict=False))


async def test_killed_by_signal_is_success_with_null_exit_code(tmp_path: Path) -> None:
    result = await _tool(tmp_path).execute("c", {"command": "echo before; kill -9 $$"}, None, None)
    assert _text(result) == "before\n"
    assert result.details["execution"]["exitCode"] is None


async def test_invalid_arguments(tmp_path: Path) -> None:
    tool = _tool(tmp_path)
    with pytest.raises(ToolExecutionError, match="^Invalid timeout: must be a finite number of seconds$"):
        await tool.execute("c", {"command": "true", "timeout": 0}, None, None)
    with pytest.raises(ToolExecutionError, match=r"^Invalid timeout: maximum is 2147483\.647 seconds$"):
        await tool.execute("c", {"command": "true", "timeout": 2147484}, None, None)
    with pytest.raises(ToolExecutionError, match="^Custom shell path not found: /no/such/shell$"):
        await _tool(tmp_path, shell_path="/no/such/shell").execute("c", {"command": "true"}, None, None)
    gone = BashTool(str(tmp_path / "missing"))
    with pytest.raises(ToolExecutionError) as info:
        await gone.execute("c", {"command": "true"}, None, None)
    assert str(info.value) == f"Working directory does not exist: {tmp_path / 'missing'}\nCannot execute bash commands."


async def test_kill_grace_sends_sigterm_before_sigkill(tmp_path: Path) -> None:
    command = "trap 'echo got-term' TERM; echo ready; while true; do sleep 0.02; done"
    started = time.monotonic()
    with pytest.raises(ToolExecutionError) as info:
        await _tool(tmp_path, kill_grace=0.5).execute("c", {"command": command, "timeout": 0.2}, None, None)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("ready\n")
    assert "got-term\n" in message  # bash may also report the TERMed `sleep` ("Terminated")
    assert message.endswith("\n\nCommand timed out after 0.2 seconds")
    # The trap kept the shell alive through the grace until the SIGKILL, which then ended the endless loop.
    assert 0.7 <= elapsed < 10


async def test_kill_tracked_process_groups(tmp_path: Path) -> None:
    task = asyncio.ensure_future(_tool(tmp_path).execute("c", {"command": "echo up; sleep 30"}, None, None))
    for _ in range(100):
        if tracked_process_groups():
            break
        await asyncio.sleep(0.01)
    assert len(tracked_process_groups()) == 1
    kill_tracked_process_groups()
    result = await asyncio.wait_for(task, 1)
    assert result.details["execution"]["exitCode"] is None  # ended by SIGKILL, not by the command
